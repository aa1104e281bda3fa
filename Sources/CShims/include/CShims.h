#ifndef SWITCHBOARD_CSHIMS_H
#define SWITCHBOARD_CSHIMS_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>

/* Linux calls the prebuilt Glibc module hides behind _GNU_SOURCE (recvmmsg/sendmmsg: see the batch calls below). */
int sb_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);

/* epoll / eventfd / timerfd, with constants Swift cannot see as macros. */
int sb_epoll_create(void);
int sb_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
/* Waits; fills fds[i]/events[i]; returns the count or -1. */
int sb_epoll_wait(int epfd, uint64_t *datas, uint32_t *events, int max, int timeout_ms);
int sb_epoll_wait_ns(int epfd, uint64_t *datas, uint32_t *events, int max, int64_t timeout_ns);
int sb_eventfd(void);
int sb_eventfd_signal(int fd);
int sb_eventfd_drain(int fd);

extern const uint32_t SB_EPOLLIN, SB_EPOLLOUT, SB_EPOLLERR, SB_EPOLLHUP, SB_EPOLLRDHUP, SB_EPOLLET, SB_EPOLLEXCLUSIVE;
/* The calling thread's name (first 15 bytes, as ps -L and top -H show it). */
void sb_thread_set_name(const char *name);
/* The calling thread's nice value (Linux schedules threads one by one): 0 or an errno (EPERM without
   CAP_SYS_NICE when lowering it). */
int sb_thread_set_nice(int nice);
int sb_thread_nice(void);
/* Monotonic clock in nanoseconds. */
uint64_t sb_monotonic_ns(void);
/* Ignores SIGPIPE for the process (a write to a closed socket returns EPIPE instead). */
void sb_ignore_sigpipe(void);

/* pipe2(fds, O_CLOEXEC): a pipe whose ends a spawned child does not inherit (unless dup2'd on purpose). */
int sb_pipe_cloexec(int fds[2]);
/* From now on SIGINT and SIGTERM each add 1 to a blocking eventfd instead of ending the process;
   returns its descriptor (the same one on every call), or -1 with both left to end the process. */
int sb_termination_eventfd(void);
extern const int SB_EPOLL_CTL_ADD, SB_EPOLL_CTL_MOD, SB_EPOLL_CTL_DEL;
extern const int SB_SOCK_NONBLOCK, SB_SOCK_CLOEXEC, SB_MSG_NOSIGNAL, SB_MSG_DONTWAIT;

/* OpenSSL function-like macros and SSL_OP constants. */
extern const uint64_t SB_SSL_OP_NO_QUERY_MTU;
extern const uint64_t SB_SSL_OP_NO_TICKET;
extern const uint64_t SB_SSL_OP_NO_RENEGOTIATION;
int sb_ssl_ctx_set_min_proto(SSL_CTX *ctx, int version);
int sb_ssl_ctx_set_max_proto(SSL_CTX *ctx, int version);
long sb_bio_pending(BIO *bio);
long sb_bio_get_mem_data(BIO *bio, char **out);
int sb_dtls_get_timeout_ms(SSL *ssl, long *ms);
int sb_dtls_handle_timeout(SSL *ssl);
int sb_dtls_set_link_mtu(SSL *ssl, long mtu);
void sb_openssl_free(void *p);
int sb_ssl_set_tlsext_host_name(SSL *ssl, const char *name);
int sb_ssl_ctx_set_ecdh_auto(SSL_CTX *ctx);

/* Batched UDP I/O over parallel arrays, so Swift never needs struct mmsghdr (hidden behind
   _GNU_SOURCE). Datagram i lives at base + i*stride (capacity stride). Up to 256 per call. */
int sb_udp_recv_batch(int fd, uint8_t *base, size_t stride, uint32_t *lens,
                      struct sockaddr_storage *addrs, unsigned int vlen);
int sb_udp_send_batch(int fd, const uint8_t *base, size_t stride, const uint32_t *lens,
                      const struct sockaddr_storage *addrs, unsigned int vlen);
/* As sb_udp_send_batch, but datagram i with joins[i] != 0 rides in the same message as datagram i-1:
   one message per run, sent with UDP generic segmentation offload (a UDP_SEGMENT control message,
   Linux 4.18) whose segment size is the run's first datagram's length (every datagram of a run that
   length, the last one no longer). Returns how many datagrams the sent messages held, or -1 and errno
   when the first message failed (EIO or EINVAL from a run: the path cannot segment). */
int sb_udp_send_segments(int fd, const uint8_t *base, size_t stride, const uint32_t *lens,
                         const struct sockaddr_storage *addrs, const uint8_t *joins, unsigned int count);
/* errno values with which the kernel refuses a segmented send (rather than the destination or buffer). */
int sb_is_segmentation_refused(int err);
/* Sets SO_NO_CHECK (no UDP checksums on IPv4, which rules out segmentation): tests of the fallback. */
int sb_udp_disable_checksums(int fd);
/* Makes the SO_REUSEPORT group `fd` belongs to hand every datagram to its first member (a one-instruction
   classic BPF program, SO_ATTACH_REUSEPORT_CBPF, Linux 4.5); 0 on success, else the errno. */
int sb_reuseport_steer_to_first(int fd);
/* Runs the calling thread on one CPU only (sched_setaffinity is GNU-only); 0 on success. */
int sb_pin_thread(int cpu);
/* Last errno of this thread (EAGAIN/EWOULDBLOCK tells an empty socket from a failure). */
int sb_errno(void);
int sb_is_eagain(int err);

/* SRTP packet-path primitives without per-call allocation (RFC 3711 §4.1.1, §4.2.1): AES through
   libgcrypt handles keyed once (only the counter or IV changes per packet), HMAC-SHA1 over OpenSSL's
   SHA-1 with the padded key states kept. A NULL from a _new function means the key could not be set up. */
void *sb_aes128_ctr_new(const uint8_t *key);
void sb_aes128_ctr_free(void *ctx);
/* XORs the AES-CTR keystream starting at counter block iv (16 bytes) into data in place. */
int sb_aes128_ctr_apply(void *ctx, const uint8_t *iv, uint8_t *data, size_t len);
size_t sb_hmac_sha1_state_size(void);
void sb_hmac_sha1_init(void *state, const uint8_t *key, size_t keylen);
/* HMAC-SHA1 over a then b (b may be empty), 20 bytes into out. */
void sb_hmac_sha1(const void *state, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, uint8_t *out);
/* AES-128-GCM for SRTP AEAD (RFC 7714): keyed once, a 12-byte IV per call, the AAD in up
   to two pieces (a2 may be empty), data transformed in place, a 16-byte tag. */
void *sb_aes128_gcm_new(const uint8_t *key);
void sb_aes128_gcm_free(void *ctx);
int sb_aes128_gcm_seal(void *ctx, const uint8_t *iv, const uint8_t *a1, size_t a1len, const uint8_t *a2, size_t a2len,
                       uint8_t *data, size_t len, uint8_t *tag);
/* Asks the CPU to start loading the cache line at p (for writing); never faults. */
static inline void sb_prefetch(const void *p) { __builtin_prefetch(p, 1, 3); }
/* Starts loading what sealing with a cipher handle touches, so a fan-out loop can have it in cache
   when the subscriber's turn comes. libgcrypt 1.10's handle is one allocation of about 2 KiB: its
   state and IV (lines 0-7), the encryption key schedule (13-16) and the cipher's round count and
   functions (29-30); the decryption schedule and the other modes' state lie between. A different
   layout only makes this a wasted hint: a prefetch never faults. */
static inline void sb_cipher_prefetch(const void *ctx) {
    const char *p = (const char *)ctx;
    for (int line = 0; line < 8; line++) __builtin_prefetch(p + 64 * line, 1, 3);
    for (int line = 13; line < 17; line++) __builtin_prefetch(p + 64 * line, 0, 3);
    __builtin_prefetch(p + 64 * 29, 0, 3);
    __builtin_prefetch(p + 64 * 30, 0, 3);
}
/* Returns 1 only when the tag is authentic; data is then the plaintext. */
int sb_aes128_gcm_open(void *ctx, const uint8_t *iv, const uint8_t *a1, size_t a1len, const uint8_t *a2, size_t a2len,
                       uint8_t *data, size_t len, const uint8_t *tag);

#endif
