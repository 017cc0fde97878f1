/* npy.h — read a matrix or vector from a NumPy .npy file, and write one.
 *
 * Supported: format versions 1.0, 2.0 and 3.0; dtype float32 ('<f4') or
 * float64 ('<f8'), little-endian, C order ('fortran_order': False). This is
 * what numpy.save writes for a float32/float64 array by default. */
#ifndef MHAVIZ_NPY_H
#define MHAVIZ_NPY_H

#include "core/layer.h"

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

/* The floats of the .npy file named file, as npy_read_floats gives them,
 * into *data: read in place when the file holds them as they are (float32,
 * no transpose, the data at a multiple of 4 bytes in the file): *data then
 * points into the file mapped read-only, *map says where the mapping is,
 * and the caller frees it with npy_unmap, never free(*data). Otherwise the
 * file is copied into a new array, *map is zeroed and the caller frees
 * *data. The file must not change while it is mapped. Returns as
 * npy_read_floats does; on failure *data is NULL and nothing is held. */
int npy_load_floats(const char *base_dir, const char *file, int rows, int cols, int transpose,
                    float **data, MappedFile *map, char *msg, size_t msglen);

/* Unmap a mapping npy_load_floats made, and zero *map. Safe on a zeroed *map. */
void npy_unmap(MappedFile *map);

/* Write the (rows, cols) floats at data (a vector of cols when rows < 0)
 * to a new file at path, as numpy.save would write a float32 array: format
 * 1.0, C order, the machine's byte order ('<f4' on x86 and ARM).
 * Returns MHAVIZ_OK or MHAVIZ_EIO (msg names path and why: a full disk
 * shows up here, never as a short file passed for whole). */
int npy_write_floats(const char *path, int rows, int cols, const float *data, char *msg, size_t msglen);

#endif
