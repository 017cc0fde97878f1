/* png.c — write an RGB picture as a PNG file, fast.
 *
 * A PNG file is a signature and three chunks: IHDR (size, 8-bit RGB), IDAT
 * (the pixels, compressed) and IEND; each chunk ends with a CRC-32 of its
 * type and data (PNG specification, W3C 2003, sections 5 and 11).
 *
 * The pixels go in as rows, each prefixed by a filter byte (0: "none"), and
 * are compressed into a zlib stream (RFC 1950): a 2-byte header, one deflate
 * block (RFC 1951) and the Adler-32 of the uncompressed bytes. The deflate
 * block uses the fixed Huffman codes, and finds repeats the way a heatmap
 * has them: at each byte it tries a copy from 3 bytes back (the pixel to the
 * left: runs of one colour) and from one row back (the pixel above: rows
 * repeated down a cell), takes the longer, and otherwise writes the byte as
 * a literal. No hash tables, no searching: flat regions cost about two byte
 * comparisons per byte. */
#include "png.h"
#include "status.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ bit output */

/* Deflate packs bits starting from the least significant bit of each byte. */
typedef struct {
    unsigned char *p; /* output buffer, large enough (see png_write) */
    size_t n;         /* bytes written */
    uint64_t acc;     /* pending bits, oldest in the low end */
    int bits;         /* how many are pending */
} Bits;

static inline void put_bits(Bits *b, uint32_t v, int n)
{
    b->acc |= (uint64_t)v << b->bits;
    b->bits += n;
    while (b->bits >= 8) {
        b->p[b->n++] = (unsigned char)b->acc;
        b->acc >>= 8;
        b->bits -= 8;
    }
}

/* Huffman codes are defined most significant bit first: reverse them. */
static uint32_t reverse(uint32_t code, int n)
{
    uint32_t r = 0;
    for (int i = 0; i < n; i++, code >>= 1)
        r = (r << 1) | (code & 1);
    return r;
}

/* The fixed literal/length code (RFC 1951, 3.2.6) for symbol s, 0..287. */
static void put_symbol(Bits *b, int s)
{
    if (s < 144)
        put_bits(b, reverse(0x30 + (uint32_t)s, 8), 8);
    else if (s < 256)
        put_bits(b, reverse(0x190 + (uint32_t)(s - 144), 9), 9);
    else if (s < 280)
        put_bits(b, reverse((uint32_t)(s - 256), 7), 7);
    else
        put_bits(b, reverse(0xC0 + (uint32_t)(s - 280), 8), 8);
}

/* Lengths 3..258 and distances 1..32768: base value and extra bits of each code (RFC 1951, 3.2.5). */
static const int LEN_BASE[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27,
                                 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const int LEN_EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const int DIST_BASE[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385,
                                  513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const int DIST_EXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10,
                                   11, 11, 12, 12, 13, 13};

/* A distance, encoded once: its 5-bit code (reversed) and extra bits. */
typedef struct {
    uint32_t code, extra;
    int extra_bits;
} Dist;

static Dist encode_distance(int d)
{
    int k = 29;
    while (DIST_BASE[k] > d)
        k--;
    Dist e = {reverse((uint32_t)k, 5), (uint32_t)(d - DIST_BASE[k]), DIST_EXTRA[k]};
    return e;
}

static void put_match(Bits *b, int len, const Dist *d)
{
    int k = 28;
    while (LEN_BASE[k] > len)
        k--;
    put_symbol(b, 257 + k);
    if (LEN_EXTRA[k])
        put_bits(b, (uint32_t)(len - LEN_BASE[k]), LEN_EXTRA[k]);
    put_bits(b, d->code, 5);
    if (d->extra_bits)
        put_bits(b, d->extra, d->extra_bits);
}

/* How many bytes from s[i] on repeat the bytes d back, at most max: eight
 * at a time while they agree, then byte by byte. */
static inline int match_length(const unsigned char *s, size_t i, size_t d, int max)
{
    int n = 0;
    for (; n + 8 <= max; n += 8) {
        uint64_t a, b;
        memcpy(&a, s + i + n, 8);
        memcpy(&b, s + i + n - d, 8);
        if (a != b)
            break;
    }
    while (n < max && s[i + n] == s[i + n - d])
        n++;
    return n;
}

/* Compress s[0..n) into one final fixed-Huffman deflate block; row is the
 * length of one filtered row. The candidates, in order: the pixel to the
 * left, the pixel above, above-right and above-left (diagonal hatching), and
 * eight pixels to the left (the hatching's period). */
static void deflate_rows(Bits *b, const unsigned char *s, size_t n, size_t row)
{
    enum { N_CAND = 5 };
    const size_t dist[N_CAND] = {3, row, row - 3, row + 3, 24};
    Dist code[N_CAND];
    int usable[N_CAND];
    for (int k = 0; k < N_CAND; k++) {
        usable[k] = dist[k] >= 1 && dist[k] <= 32768;
        code[k] = encode_distance(usable[k] ? (int)dist[k] : 1);
    }
    put_bits(b, 1, 1); /* BFINAL: the last block */
    put_bits(b, 1, 2); /* BTYPE 01: fixed Huffman codes */
    size_t i = 0;
    while (i < n) {
        const int max = n - i < 258 ? (int)(n - i) : 258;
        int best = 0, best_k = 0;
        for (int k = 0; k < N_CAND && best < max; k++) {
            if (!usable[k] || i < dist[k])
                continue;
            const int len = match_length(s, i, dist[k], max);
            if (len > best)
                best = len, best_k = k;
        }
        /* A copy costs up to 31 bits: from a row back it pays from 4 bytes on. */
        if (best >= (dist[best_k] > 64 ? 4 : 3)) {
            put_match(b, best, &code[best_k]);
            i += (size_t)best;
        } else {
            put_symbol(b, s[i]);
            i++;
        }
    }
    put_symbol(b, 256); /* end of block */
    put_bits(b, 0, 7);  /* flush to a whole byte */
    b->bits = 0;
    b->acc = 0;
}

/* Adler-32 (RFC 1950, 8.2) of s[0..n): a = 1 + the sum of the bytes, b = the
 * sum of the successive a's, both mod 65521. Over a block of 16 bytes, b
 * grows by 16 a + sum (16 - j) s[j] and a by sum s[j]: the same numbers as
 * byte by byte, without a chain of dependent additions. */
static uint32_t adler32(const unsigned char *s, size_t n)
{
    uint32_t a = 1, b = 0;
    while (n > 0) {
        size_t chunk = n < 5552 ? n : 5552; /* the most bytes before b can overflow 32 bits */
        n -= chunk;
        for (; chunk >= 16; chunk -= 16, s += 16) {
            uint32_t sum = 0, weighted = 0;
            for (int j = 0; j < 16; j++) {
                sum += s[j];
                weighted += (uint32_t)(16 - j) * s[j];
            }
            b += 16 * a + weighted;
            a += sum;
        }
        for (; chunk > 0; chunk--) {
            a += *s++;
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    return (b << 16) | a;
}

/* --------------------------------------------------------------- chunks */

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* CRC-32 of the chunk type and data (PNG specification, annex D). */
static uint32_t chunk_crc(const unsigned char *type, const unsigned char *data, size_t n)
{
    uint32_t table[256];
    for (uint32_t k = 0; k < 256; k++) {
        uint32_t c = k;
        for (int j = 0; j < 8; j++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[k] = c;
    }
    uint32_t c = 0xFFFFFFFFu;
    for (int i = 0; i < 4; i++)
        c = table[(c ^ type[i]) & 0xFF] ^ (c >> 8);
    for (size_t i = 0; i < n; i++)
        c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* Write one chunk; returns 0 when a write failed. */
static int put_chunk(FILE *f, const char *type, const unsigned char *data, size_t n)
{
    unsigned char head[8], tail[4];
    put_u32(head, (uint32_t)n);
    memcpy(head + 4, type, 4);
    put_u32(tail, chunk_crc((const unsigned char *)type, data, n));
    return fwrite(head, 1, 8, f) == 8 && (n == 0 || fwrite(data, 1, n, f) == n) && fwrite(tail, 1, 4, f) == 4;
}

int png_write_rows(const char *path, const unsigned char *rows, int w, int h, char *err, size_t errlen)
{
    int rc = MHAVIZ_OK;
    FILE *f = NULL;
    const unsigned char *s = rows;
    const size_t row = (size_t)w * 3 + 1; /* filter byte + pixels */
    const size_t n = row * (size_t)h;
    unsigned char *z = malloc(n + n / 4 + 64); /* zlib stream: at most 9 bits per byte, see deflate_rows */
    if (!z) {
        snprintf(err, errlen, "%s: out of memory encoding the PNG", path);
        rc = MHAVIZ_ENOMEM;
        goto cleanup;
    }

    Bits b = {z, 0, 0, 0};
    z[b.n++] = 0x78; /* zlib: deflate, 32 KiB window */
    z[b.n++] = 0x01; /* no dictionary; 0x7801 is a multiple of 31 */
    deflate_rows(&b, s, n, row);
    put_u32(z + b.n, adler32(s, n));
    b.n += 4;

    unsigned char ihdr[13];
    put_u32(ihdr, (uint32_t)w);
    put_u32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8;  /* bits per channel */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering, one filter byte per row */
    ihdr[12] = 0; /* not interlaced */
    static const unsigned char signature[8] = {137, 'P', 'N', 'G', '\r', '\n', 26, '\n'};

    errno = 0;
    f = fopen(path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    int ok = fwrite(signature, 1, 8, f) == 8 && put_chunk(f, "IHDR", ihdr, sizeof ihdr) &&
             put_chunk(f, "IDAT", z, b.n) && put_chunk(f, "IEND", NULL, 0) && fflush(f) == 0;
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    f = NULL;
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write the PNG: %s", path, strerror(saved ? saved : EIO));
        rc = MHAVIZ_EIO;
    }
cleanup:
    if (f)
        fclose(f);
    free(z);
    return rc;
}
