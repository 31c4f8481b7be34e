# User saw: if the object returned by xp.start_server() is not kept, Python garbage-collects the profiler
# server and profiling silently stops working (feature request: keep the server static).
# https://github.com/pytorch/xla/issues/7841
# This trial starts the server without keeping the handle, collects garbage, and checks whether the port
# still accepts a connection.
import gc
import socket

import torch_xla.debug.profiler as xp

PORT = 9473


def listening(port):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


kept = xp.start_server(PORT)
print("kept handle, listening:", listening(PORT))
del kept
gc.collect()
alive = listening(PORT)
print("after dropping the handle, listening:", alive)
if not alive:
    print("REPRODUCED: profiler server stopped once its handle was garbage-collected")
    raise SystemExit(1)
print("not reproduced")
