"""Write the small .npy test files in tests/data/npy/ (committed; rerun to
regenerate): the layer of tests/data/good/small_x.json as .npy files, and
broken files for the error tests. Run: python3 tests/data/make_npy.py"""
import os
import numpy as np
from numpy.lib import format as npf

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npy")
os.makedirs(here, exist_ok=True)

def path(name):
    return os.path.join(here, name)

eye = np.eye(4)
W_q = np.arange(1, 17, dtype=np.float64).reshape(4, 4)   # same as small_x.json
W_k = 0.5 * eye

# The layer of small_x.json: mixed float32 / float64 and header versions.
np.save(path("x.npy"), eye.astype("<f4"))                 # version 1.0, float32
np.save(path("W_q.npy"), W_q.astype("<f8"))               # version 1.0, float64
with open(path("W_k.npy"), "wb") as f:                     # version 2.0
    npf.write_array(f, W_k.astype("<f4"), version=(2, 0))
with open(path("W_v.npy"), "wb") as f:                     # version 3.0
    npf.write_array(f, eye.astype("<f4"), version=(3, 0))
np.save(path("W_o.npy"), eye.astype("<f4"))
np.save(path("W_q_T.npy"), np.ascontiguousarray(W_q.T).astype("<f4"))  # for "W@x"
np.save(path("b_q.npy"), np.array([0.25, -0.5, 1.0, 2.0], dtype="<f4"))

# float32 whose data starts 2 bytes past a multiple of 4 (numpy pads its
# headers to 64 bytes; the format allows any length): mhaviz copies it
# instead of reading it in place.
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }"
header += " " * ((2 - 10 - len(header) - 1) % 4) + "\n"
assert (10 + len(header)) % 4 == 2
with open(path("W_o_odd_header.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1"))
    f.write(eye.astype("<f4").tobytes())
assert (np.load(path("W_o_odd_header.npy")) == eye).all()

# Broken files.
np.save(path("W_k_4x3.npy"), W_k[:, :3].astype("<f4"))    # wrong shape
np.save(path("big_endian.npy"), W_k.astype(">f4"))
np.save(path("int32.npy"), np.arange(16, dtype="<i4").reshape(4, 4))
np.save(path("fortran.npy"), np.asfortranarray(W_q.astype("<f4")))
bad = W_k.astype("<f4")
bad[2, 1] = np.nan
np.save(path("nan.npy"), bad)
big = W_k.astype("<f8")
big[1, 3] = 1e300
np.save(path("too_big.npy"), big)
np.save(path("truncated.npy"), W_k.astype("<f4"))
with open(path("truncated.npy"), "r+b") as f:
    f.truncate(os.path.getsize(path("truncated.npy")) - 6)
with open(path("not_npy.npy"), "w") as f:
    f.write("[[1, 2], [3, 4]]\n")
