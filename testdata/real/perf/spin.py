import threading, hashlib, time
def spin(ms):
    end = time.monotonic() + ms / 1000
    h = b'x'
    while time.monotonic() < end:
        h = hashlib.sha256(h).digest()
t = threading.Thread(target=spin, args=(80,), name="hasher")
t.start(); spin(100); t.join()
