#include <opus/opus.h>
