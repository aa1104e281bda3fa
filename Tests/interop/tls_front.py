"""A TLS server (Python's ssl module, OpenSSL) on a loopback port handing each connection's plaintext to a TCP port:
FFmpeg's RTMP listener has no TLS of its own, so together they are an RTMPS server. `test_video_broadcast_lifetime.py`
runs it as a process of its own (PyAV's listener holds the interpreter while it waits; a fork of the test's threaded
process can inherit a lock some other thread held, and hang). Arguments: CERT KEY TARGET_PORT. Prints `port N` once
listening, then `handshake` for each handshake that completed."""
import select
import socket
import ssl
import sys
import threading


def relay(tls, target):
    """One thread per connection moves bytes both ways (an SSL socket is not read and written from two threads)."""
    try:
        plain = socket.create_connection(("127.0.0.1", target))
    except OSError:
        tls.close()
        return
    try:
        while True:
            readable = [tls] if tls.pending() else select.select([tls, plain], [], [], 5)[0]
            for source in readable:
                data = source.recv(65536)
                if not data:
                    return
                (plain if source is tls else tls).sendall(data)
    except OSError:
        pass
    finally:
        tls.close()
        plain.close()


def main(cert, key, target):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    print("port", listener.getsockname()[1], flush=True)
    while True:
        raw, _ = listener.accept()
        try:
            conn = context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()
            continue
        print("handshake", flush=True)
        threading.Thread(target=relay, args=(conn, target), daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
