#define _GNU_SOURCE
#include "CShims.h"
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sched.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>

/* libcrypto is never torn down at exit. Event-loop and worker threads may still be finishing a piece of work
   (a WebSocket frame's mask, a DTLS timer) while exit() runs the atexit handlers, and OpenSSL's own handler
   frees the locks those calls take (a NULL rwlock in RAND_bytes). The kernel reclaims the memory anyway.
   Runs when the image loads, before any libcrypto call could register that handler. */
__attribute__((constructor)) static void sb_openssl_keep_at_exit(void) {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

int sb_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) { return accept4(fd, addr, len, flags); }

int sb_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
int sb_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}
int sb_epoll_wait(int epfd, uint64_t *datas, uint32_t *events, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n;
    do { n = epoll_wait(epfd, evs, max, timeout_ms); } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) { datas[i] = evs[i].data.u64; events[i] = evs[i].events; }
    return n;
}
/* Like sb_epoll_wait with the timeout in nanoseconds (epoll_pwait2, Linux 5.11): epoll_wait's whole
   milliseconds made every timer up to 1 ms late, the 20 ms media tick included. Falls back to
   milliseconds, rounded up, where the kernel lacks it. */
int sb_epoll_wait_ns(int epfd, uint64_t *datas, uint32_t *events, int max, int64_t timeout_ns) {
    static int no_pwait2 = 0;
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n;
    if (!__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED)) {
        struct timespec ts = { .tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000 };
        do { n = epoll_pwait2(epfd, evs, max, timeout_ns < 0 ? NULL : &ts, NULL); } while (n < 0 && errno == EINTR);
        if (n < 0 && errno == ENOSYS) __atomic_store_n(&no_pwait2, 1, __ATOMIC_RELAXED);
        else goto copy;
    }
    {
        int ms = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000);
        do { n = epoll_wait(epfd, evs, max, ms); } while (n < 0 && errno == EINTR);
    }
copy:
    for (int i = 0; i < n; i++) { datas[i] = evs[i].data.u64; events[i] = evs[i].events; }
    return n;
}
int sb_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
int sb_eventfd_signal(int fd) { uint64_t one = 1; return (int)write(fd, &one, sizeof one); }
int sb_eventfd_drain(int fd) { uint64_t v; return (int)read(fd, &v, sizeof v); }

const uint32_t SB_EPOLLIN = EPOLLIN, SB_EPOLLOUT = EPOLLOUT, SB_EPOLLERR = EPOLLERR,
    SB_EPOLLHUP = EPOLLHUP, SB_EPOLLRDHUP = EPOLLRDHUP, SB_EPOLLET = EPOLLET, SB_EPOLLEXCLUSIVE = EPOLLEXCLUSIVE;
uint64_t sb_monotonic_ns(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec; }
void sb_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

int sb_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
static int sb_termination_fd = -1;
static void sb_on_termination(int sig) {
    (void)sig;
    uint64_t one = 1;
    ssize_t n = write(sb_termination_fd, &one, sizeof one); /* async-signal-safe */
    (void)n;
}
int sb_termination_eventfd(void) {
    if (sb_termination_fd < 0) sb_termination_fd = eventfd(0, EFD_CLOEXEC);
    if (sb_termination_fd < 0) return -1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = sb_on_termination;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGINT, &action, NULL) != 0 || sigaction(SIGTERM, &action, NULL) != 0) {
        signal(SIGINT, SIG_DFL); /* all or nothing: a signal nobody reads must still end the process */
        signal(SIGTERM, SIG_DFL);
        return -1;
    }
    return sb_termination_fd;
}
const int SB_EPOLL_CTL_ADD = EPOLL_CTL_ADD, SB_EPOLL_CTL_MOD = EPOLL_CTL_MOD, SB_EPOLL_CTL_DEL = EPOLL_CTL_DEL;
const int SB_SOCK_NONBLOCK = SOCK_NONBLOCK, SB_SOCK_CLOEXEC = SOCK_CLOEXEC,
    SB_MSG_NOSIGNAL = MSG_NOSIGNAL, SB_MSG_DONTWAIT = MSG_DONTWAIT;

const uint64_t SB_SSL_OP_NO_QUERY_MTU = SSL_OP_NO_QUERY_MTU;
const uint64_t SB_SSL_OP_NO_TICKET = SSL_OP_NO_TICKET;
const uint64_t SB_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
int sb_ssl_ctx_set_min_proto(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_min_proto_version(ctx, version); }
int sb_ssl_ctx_set_max_proto(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_max_proto_version(ctx, version); }
long sb_bio_pending(BIO *bio) { return (long)BIO_pending(bio); }
long sb_bio_get_mem_data(BIO *bio, char **out) { return BIO_get_mem_data(bio, out); }
int sb_dtls_get_timeout_ms(SSL *ssl, long *ms) {
    struct timeval tv;
    if (!DTLSv1_get_timeout(ssl, &tv)) return 0;
    *ms = tv.tv_sec * 1000 + tv.tv_usec / 1000;
    return 1;
}
int sb_dtls_handle_timeout(SSL *ssl) { return (int)DTLSv1_handle_timeout(ssl); }
int sb_dtls_set_link_mtu(SSL *ssl, long mtu) { return (int)DTLS_set_link_mtu(ssl, mtu); }
void sb_openssl_free(void *p) { OPENSSL_free(p); }
int sb_ssl_set_tlsext_host_name(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
int sb_ssl_ctx_set_ecdh_auto(SSL_CTX *ctx) { (void)ctx; return 1; }

int sb_udp_recv_batch(int fd, uint8_t *base, size_t stride, uint32_t *lens,
                      struct sockaddr_storage *addrs, unsigned int vlen) {
    struct mmsghdr msgs[256];
    struct iovec iov[256];
    if (vlen > 256) vlen = 256;
    for (unsigned int i = 0; i < vlen; i++) {
        iov[i].iov_base = base + (size_t)i * stride;
        iov[i].iov_len = stride;
        memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &addrs[i];
        msgs[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
        msgs[i].msg_len = 0;
    }
    int n;
    do { n = recvmmsg(fd, msgs, vlen, MSG_DONTWAIT, NULL); } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) {
        /* A datagram larger than stride is truncated: report it as empty so it is dropped. */
        lens[i] = (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) ? 0 : msgs[i].msg_len;
    }
    return n;
}

int sb_reuseport_steer_to_first(int fd) {
    struct sock_filter code[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
    struct sock_fprog prog = { .len = 1, .filter = code };
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) == 0 ? 0 : errno;
}

int sb_udp_send_batch(int fd, const uint8_t *base, size_t stride, const uint32_t *lens,
                      const struct sockaddr_storage *addrs, unsigned int vlen) {
    struct mmsghdr msgs[256];
    struct iovec iov[256];
    if (vlen > 256) vlen = 256;
    for (unsigned int i = 0; i < vlen; i++) {
        iov[i].iov_base = (void *)(base + (size_t)i * stride);
        iov[i].iov_len = lens[i];
        memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = (void *)&addrs[i];
        msgs[i].msg_hdr.msg_namelen = addrs[i].ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                                     : sizeof(struct sockaddr_in);
        msgs[i].msg_len = 0;
    }
    int n;
    do { n = sendmmsg(fd, msgs, vlen, MSG_DONTWAIT | MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    return n;
}

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

int sb_udp_send_segments(int fd, const uint8_t *base, size_t stride, const uint32_t *lens,
                         const struct sockaddr_storage *addrs, const uint8_t *joins, unsigned int count) {
    struct mmsghdr msgs[256];
    struct iovec iov[256];
    unsigned int first[256];
    union { char bytes[CMSG_SPACE(sizeof(uint16_t))]; struct cmsghdr align; } control[256];
    if (count > 256) count = 256;
    unsigned int m = 0;
    for (unsigned int i = 0; i < count; i++) {
        iov[i].iov_base = (void *)(base + (size_t)i * stride);
        iov[i].iov_len = lens[i];
        if (i > 0 && joins[i]) {
            msgs[m - 1].msg_hdr.msg_iovlen++;
            continue;
        }
        memset(&msgs[m], 0, sizeof msgs[m]);
        msgs[m].msg_hdr.msg_iov = &iov[i];
        msgs[m].msg_hdr.msg_iovlen = 1;
        msgs[m].msg_hdr.msg_name = (void *)&addrs[i];
        msgs[m].msg_hdr.msg_namelen = addrs[i].ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                                     : sizeof(struct sockaddr_in);
        first[m] = i;
        m++;
    }
    for (unsigned int k = 0; k < m; k++) {
        if (msgs[k].msg_hdr.msg_iovlen < 2) continue;
        memset(&control[k], 0, sizeof control[k]);
        msgs[k].msg_hdr.msg_control = control[k].bytes;
        msgs[k].msg_hdr.msg_controllen = sizeof control[k].bytes;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[k].msg_hdr);
        c->cmsg_level = IPPROTO_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        uint16_t size = (uint16_t)lens[first[k]];
        memcpy(CMSG_DATA(c), &size, sizeof size);
    }
    int n;
    do { n = sendmmsg(fd, msgs, m, MSG_DONTWAIT | MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    if (n <= 0) return n;
    return (unsigned int)n >= m ? (int)count : (int)first[n];
}

int sb_is_segmentation_refused(int err) { return err == EIO || err == EINVAL || err == EOPNOTSUPP || err == ENOPROTOOPT; }

int sb_udp_disable_checksums(int fd) {
    int one = 1;
    return setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof one) == 0 ? 0 : errno;
}

int sb_pin_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

int sb_errno(void) { return errno; }
int sb_is_eagain(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

#include <gcrypt.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <openssl/sha.h>

/* SRTP's ciphers are libgcrypt handles keyed once; per packet only the counter or IV changes. At
   packet sizes a cipher call costs mostly its fixed part, and libgcrypt's (counter, IV, AAD, tag straight
   into its bulk VAES/PCLMUL code) is about half of OpenSSL 3's EVP, whose provider layer looks its
   parameters up by name on every call: AES-GCM 125 against 244 ns at 160 bytes, 316 against 494 ns at
   1,100 bytes; AES-CTR 90 against 248 ns at 1,100 bytes (docs/benchmarks.md). OpenSSL keeps DTLS and
   HMAC-SHA1. */
static pthread_once_t sb_gcrypt_once = PTHREAD_ONCE_INIT;
static int sb_gcrypt_ready;
static void sb_gcrypt_init(void) {
    /* The process's first user initialises the library: no secure memory (keys live in ordinary
       memory like OpenSSL's), then initialisation finished, so any thread may use handles. */
    if (!gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
        if (!gcry_check_version("1.8.0")) return;
        gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
        gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    }
    sb_gcrypt_ready = 1;
}

static void *sb_cipher_open(int mode, const uint8_t *key) {
    pthread_once(&sb_gcrypt_once, sb_gcrypt_init);
    gcry_cipher_hd_t h = NULL;
    if (!sb_gcrypt_ready || gcry_cipher_open(&h, GCRY_CIPHER_AES128, mode, 0) != 0) return NULL;
    if (gcry_cipher_setkey(h, key, 16) != 0) { gcry_cipher_close(h); return NULL; }
    return h;
}

void *sb_aes128_ctr_new(const uint8_t *key) { return sb_cipher_open(GCRY_CIPHER_MODE_CTR, key); }
void sb_aes128_ctr_free(void *ctx) { gcry_cipher_close((gcry_cipher_hd_t)ctx); }
int sb_aes128_ctr_apply(void *ctx, const uint8_t *iv, uint8_t *data, size_t len) {
    gcry_cipher_hd_t h = (gcry_cipher_hd_t)ctx;
    if (gcry_cipher_setctr(h, iv, 16) != 0) return 0;
    return len == 0 || gcry_cipher_encrypt(h, data, len, NULL, 0) == 0;
}

typedef struct { SHA_CTX inner, outer; } sb_hmac_sha1_state;
size_t sb_hmac_sha1_state_size(void) { return sizeof(sb_hmac_sha1_state); }
void sb_hmac_sha1_init(void *state, const uint8_t *key, size_t keylen) {
    sb_hmac_sha1_state *s = (sb_hmac_sha1_state *)state;
    uint8_t block[64], hashed[20];
    if (keylen > 64) { SHA1(key, keylen, hashed); key = hashed; keylen = 20; }
    memset(block, 0x36, 64);
    for (size_t i = 0; i < keylen; i++) block[i] ^= key[i];
    SHA1_Init(&s->inner); SHA1_Update(&s->inner, block, 64);
    memset(block, 0x5c, 64);
    for (size_t i = 0; i < keylen; i++) block[i] ^= key[i];
    SHA1_Init(&s->outer); SHA1_Update(&s->outer, block, 64);
}
void sb_hmac_sha1(const void *state, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, uint8_t *out) {
    const sb_hmac_sha1_state *s = (const sb_hmac_sha1_state *)state;
    SHA_CTX ctx = s->inner;
    uint8_t inner[20];
    SHA1_Update(&ctx, a, alen);
    if (blen) SHA1_Update(&ctx, b, blen);
    SHA1_Final(inner, &ctx);
    ctx = s->outer;
    SHA1_Update(&ctx, inner, 20);
    SHA1_Final(out, &ctx);
}

/* A libgcrypt in FIPS mode refuses to seal under an IV given from outside, which SRTP's IVs are: each
   handle seals an empty payload once here, so such a host fails AES-GCM at key setup (AES-CM still works)
   instead of dropping every packet. */
void *sb_aes128_gcm_new(const uint8_t *key) {
    gcry_cipher_hd_t h = sb_cipher_open(GCRY_CIPHER_MODE_GCM, key);
    uint8_t iv[12] = {0}, empty[1], tag[16];
    if (h && !sb_aes128_gcm_seal(h, iv, NULL, 0, NULL, 0, empty, 0, tag)) {
        gcry_cipher_close(h);
        return NULL;
    }
    return h;
}
void sb_aes128_gcm_free(void *ctx) { gcry_cipher_close((gcry_cipher_hd_t)ctx); }

/* Sets the IV, then feeds the AAD in up to two pieces (libgcrypt joins pieces of any length). */
static int sb_gcm_begin(gcry_cipher_hd_t h, const uint8_t *iv, const uint8_t *a1, size_t a1len,
                        const uint8_t *a2, size_t a2len) {
    if (gcry_cipher_setiv(h, iv, 12) != 0) return 0;
    if (a1len && gcry_cipher_authenticate(h, a1, a1len) != 0) return 0;
    return !a2len || gcry_cipher_authenticate(h, a2, a2len) == 0;
}

int sb_aes128_gcm_seal(void *ctx, const uint8_t *iv, const uint8_t *a1, size_t a1len, const uint8_t *a2, size_t a2len,
                       uint8_t *data, size_t len, uint8_t *tag) {
    gcry_cipher_hd_t h = (gcry_cipher_hd_t)ctx;
    /* Called for an empty payload too: that call is where a refusing libgcrypt says so. */
    if (!sb_gcm_begin(h, iv, a1, a1len, a2, a2len) || gcry_cipher_encrypt(h, data, len, NULL, 0) != 0) return 0;
    return gcry_cipher_gettag(h, tag, 16) == 0;
}

int sb_aes128_gcm_open(void *ctx, const uint8_t *iv, const uint8_t *a1, size_t a1len, const uint8_t *a2, size_t a2len,
                       uint8_t *data, size_t len, const uint8_t *tag) {
    gcry_cipher_hd_t h = (gcry_cipher_hd_t)ctx;
    if (!sb_gcm_begin(h, iv, a1, a1len, a2, a2len)) return 0;
    if (len && gcry_cipher_decrypt(h, data, len, NULL, 0) != 0) return 0;
    return gcry_cipher_checktag(h, tag, 16) == 0;
}
#pragma GCC diagnostic pop

void sb_thread_set_name(const char *name) {
    char short_name[16];
    strncpy(short_name, name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = 0;
    pthread_setname_np(pthread_self(), short_name);
}

int sb_thread_set_nice(int nice) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    return setpriority(PRIO_PROCESS, (id_t)tid, nice) == 0 ? 0 : errno;
}

int sb_thread_nice(void) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    return getpriority(PRIO_PROCESS, (id_t)tid);
}
