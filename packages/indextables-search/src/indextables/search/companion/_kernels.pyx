# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of ``_kernels_py``: where Parquet PLAIN byte-array values start."""

from cpython.bytes cimport PyBytes_FromStringAndSize


def byte_array_starts(const unsigned char[:] data, Py_ssize_t count):
    """``count + 1`` little-endian int64 positions: where each of the first ``count``
    PLAIN BYTE_ARRAY values (4-byte length, bytes) starts, then where the last ends.
    Raises ValueError when the values run past ``data``."""
    cdef Py_ssize_t size = data.shape[0]
    cdef Py_ssize_t position = 0
    cdef Py_ssize_t index
    cdef unsigned long long length
    out = PyBytes_FromStringAndSize(NULL, (count + 1) * 8)
    cdef char *target = out
    cdef long long *starts = <long long *> target
    cdef bint short = False
    with nogil:
        for index in range(count):
            if position + 4 > size:
                short = True
                break
            length = (<unsigned long long> data[position]
                      | (<unsigned long long> data[position + 1] << 8)
                      | (<unsigned long long> data[position + 2] << 16)
                      | (<unsigned long long> data[position + 3] << 24))
            starts[index] = position
            position += 4 + <Py_ssize_t> length
            if position > size:
                short = True
                break
        starts[count] = position
    if short:
        raise ValueError("PLAIN byte-array values run past their page")
    return out
