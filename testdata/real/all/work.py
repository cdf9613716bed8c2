import os, threading, time, socket
def worker(n):
    for i in range(3):
        with open("/etc/hostname") as f: f.read()
        time.sleep(0.01)
ts = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
for t in ts: t.start()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(w, b"x"); os._exit(0)
os.read(r, 1); os.waitpid(pid, 0)
for t in ts: t.join()
