#define MPG123_NO_LARGENAME 1
#include <stddef.h>
#include <sys/types.h>
#include <mpg123.h>
