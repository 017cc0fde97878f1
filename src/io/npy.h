/* npy.h — read a matrix or vector from a NumPy .npy file, and write one.
 *
 * Supported: format versions 1.0, 2.0 and 3.0; dtype float32 ('<f4') or
 * float64 ('<f8'), little-endian, C order ('fortran_order': False). This is
 * what numpy.save writes for a float32/float64 array by default. */
#ifndef MHAVIZ_NPY_H
#define MHAVIZ_NPY_H

#include <stddef.h>

/* Read the .npy file named file (relative names are resolved in base_dir)
 * into dst as floats. Expected shape: (rows, cols), or (cols,) when rows < 0.
 * When transpose, dst is filled as the (cols, rows) transpose.
 * dst must hold rows*cols floats (cols when rows < 0); the shape is checked
 * from the header before any data is read.
 * Returns MHAVIZ_OK; MHAVIZ_EINPUT (bad file: msg names the file and what is
 * wrong, e.g. "W_k.npy: shape (8, 4), ..."), MHAVIZ_EIO (cannot open or read:
 * msg says why) or MHAVIZ_ENOMEM. */
int npy_read_floats(const char *base_dir, const char *file, int rows, int cols, int transpose,
                    float *dst, char *msg, size_t msglen);

/* Write the (rows, cols) floats at data (a vector of cols when rows < 0)
 * to a new file at path, as numpy.save would write a float32 array: format
 * 1.0, C order, the machine's byte order ('<f4' on x86 and ARM).
 * Returns MHAVIZ_OK or MHAVIZ_EIO (msg names path and why: a full disk
 * shows up here, never as a short file passed for whole). */
int npy_write_floats(const char *path, int rows, int cols, const float *data, char *msg, size_t msglen);

#endif
