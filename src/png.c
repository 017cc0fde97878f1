/* png.c — write an RGB picture as a PNG file, fast.
 *
 * A PNG file is a signature and three chunks: IHDR (size, 8-bit RGB), IDAT
 * (the pixels, compressed) and IEND; each chunk ends with a CRC-32 of its
 * type and data (PNG specification, W3C 2003, sections 5 and 11).
 *
 * The pixels go in as rows, each prefixed by a filter byte (0: "none"), and
 * are compressed into a zlib stream (RFC 1950): a 2-byte header, deflate
 * blocks (RFC 1951) and the Adler-32 of the uncompressed bytes.
 *
 * Deflate replaces repeated bytes by copies ("length L from D bytes back")
 * and writes what is left with Huffman codes. A general compressor searches
 * hash chains for repeats; a heatmap has them in known places: a row equal
 * to the row above is copied whole, and elsewhere at each byte we try a
 * copy from the pixel to the left (runs of one colour), eight pixels back
 * and the pixel above-right (the mask's diagonal hatching: its period and
 * its slope), the pixel above (a cell's rows repeat), take the longest,
 * and only where these give little look up the last place the next 4
 * bytes were seen (repeated digits and letters).
 * Each block of up to 32768 copies and literals then gets Huffman codes
 * built for its own counts and goes to the file as it is made. */
#include "png.h"
#include "status.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define PNG_X86_AVX2 /* an AVX2 path, taken where the processor has it */
#endif

/* ------------------------------------------------------------ bit output */

/* Deflate packs bits starting from the least significant bit of each byte. */
typedef struct {
    unsigned char *p; /* output buffer: ZBUF bytes, enough for one block */
    size_t n;         /* bytes written */
    uint64_t acc;     /* pending bits, oldest in the low end: fewer than 8 between calls */
    int bits;         /* how many are pending */
} Bits;

/* Append the n (<= 56) low bits of v. The whole bytes among the pending
 * bits go out at once: all eight bytes of acc are stored, and b->n advances
 * by the whole ones (the buffer keeps 8 bytes to spare), with no branch. */
static inline void put_bits(Bits *b, uint64_t v, int n)
{
    b->acc |= v << b->bits;
    b->bits += n;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(b->p + b->n, &b->acc, 8);
#else
    for (int k = 0; k < 8; k++)
        b->p[b->n + k] = (unsigned char)(b->acc >> (8 * k));
#endif
    b->n += (size_t)(b->bits >> 3);
    b->acc >>= b->bits & ~7; /* bits was at most 7 + 56 */
    b->bits &= 7;
}

/* Write out what is pending, padded with zero bits to a whole byte. */
static void align_bits(Bits *b)
{
    for (; b->bits > 0; b->bits -= 8) {
        b->p[b->n++] = (unsigned char)b->acc;
        b->acc >>= 8;
    }
    b->bits = 0;
    b->acc = 0;
}

/* Huffman codes are defined most significant bit first: reverse them. */
static uint32_t reverse(uint32_t code, int n)
{
    uint32_t r = 0;
    for (int i = 0; i < n; i++, code >>= 1)
        r = (r << 1) | (code & 1);
    return r;
}

/* Lengths 3..258 and distances 1..32768: base value and extra bits of each code (RFC 1951, 3.2.5). */
static const int LEN_BASE[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27,
                                 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const int LEN_EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const int DIST_BASE[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385,
                                  513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const int DIST_EXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10,
                                   11, 11, 12, 12, 13, 13};

/* A length or distance as deflate writes it: a symbol, then the value of
 * its extra bits (how many: LEN_EXTRA, DIST_EXTRA). */
typedef struct {
    uint16_t sym;   /* length: 257..285; distance: 0..29 */
    uint16_t extra;
} Code;

/* Every length's and distance's code, looked up rather than searched for:
 * lengths by value, distances up to 256 by d - 1 and beyond by (d - 1) >> 7
 * (from 257 on the code bases are multiples of 128, plus 1). */
typedef struct {
    Code len[259];   /* by length 3..258 */
    Code near[256];  /* by distance - 1, distances 1..256 */
    Code far[256];   /* by (distance - 1) >> 7, distances 257..32768 */
} CodeTables;

static Code code_for(const int *base, int n_codes, int first_sym, int v)
{
    int k = n_codes - 1;
    while (base[k] > v)
        k--;
    Code c = {(uint16_t)(first_sym + k), (uint16_t)(v - base[k])};
    return c;
}

static void code_tables(CodeTables *t)
{
    for (int len = 3; len <= 258; len++)
        t->len[len] = code_for(LEN_BASE, 29, 257, len);
    for (int d = 1; d <= 256; d++)
        t->near[d - 1] = code_for(DIST_BASE, 30, 0, d);
    for (int k = 2; k < 256; k++) {
        /* every distance with this k has the code of its smallest one */
        t->far[k] = code_for(DIST_BASE, 30, 0, k * 128 + 1);
        t->far[k].extra = 0;
    }
}

static inline Code length_code(const CodeTables *t, int len) { return t->len[len]; }

static inline Code distance_code(const CodeTables *t, int d)
{
    if (d <= 256)
        return t->near[d - 1];
    Code c = t->far[(d - 1) >> 7];
    c.extra = (uint16_t)(d - DIST_BASE[c.sym]);
    return c;
}

/* -------------------------------------------------------- Huffman codes */

/* Code lengths, at most max_bits, of a Huffman code for the counts
 * freq[0..n) (n <= 288): the two lightest subtrees are merged until one
 * tree is left. With the leaves sorted by weight (ties: lower symbol
 * first), the merged subtrees come out in order of weight too, so the two
 * lightest are always at the front of one of two queues: the leaves not yet
 * merged and the subtrees made so far (ties: the leaf first). When the
 * deepest leaf is too deep, the counts are halved and the tree built
 * again. Unused symbols get length 0; when a single symbol is used, a
 * second one gets a code too, so every code is complete (zlib requires it
 * of the code-length code). The result is the same on every run. */
static void huffman_lengths(const uint32_t *freq, int n, int max_bits, uint8_t *len)
{
    uint32_t w[288];
    int sym[288], used = 0;
    for (int i = 0; i < n; i++) {
        w[i] = freq[i];
        len[i] = 0;
        if (freq[i] > 0)
            sym[used++] = i;
    }
    if (used < 2) {
        const int first = used == 1 ? sym[0] : 0;
        len[first] = 1;
        len[first == 0 ? 1 : 0] = 1;
        return;
    }
    for (;;) {
        /* sym[0..used): the used symbols by (weight, symbol), insertion sort */
        for (int i = 1; i < used; i++) {
            const int v = sym[i];
            int j = i;
            for (; j > 0 && (w[sym[j - 1]] > w[v] || (w[sym[j - 1]] == w[v] && sym[j - 1] > v)); j--)
                sym[j] = sym[j - 1];
            sym[j] = v;
        }
        /* Nodes 0..used-1 are the leaves in that order, internal nodes follow. */
        uint32_t weight[2 * 288];
        int parent[2 * 288];
        for (int k = 0; k < used; k++)
            weight[k] = w[sym[k]];
        int next_leaf = 0, next_inner = used, nodes = used;
        for (int merge = 0; merge < used - 1; merge++) {
            int pick[2];
            for (int p = 0; p < 2; p++) {
                const int leaf_ok = next_leaf < used;
                const int inner_ok = next_inner < nodes;
                if (leaf_ok && (!inner_ok || weight[next_leaf] <= weight[next_inner]))
                    pick[p] = next_leaf++;
                else
                    pick[p] = next_inner++;
            }
            weight[nodes] = weight[pick[0]] + weight[pick[1]];
            parent[pick[0]] = parent[pick[1]] = nodes;
            nodes++;
        }
        /* Depths, from the root (the last node) down: parents come after children. */
        int depth[2 * 288];
        depth[nodes - 1] = 0;
        int deepest = 0;
        for (int k = nodes - 2; k >= 0; k--) {
            depth[k] = depth[parent[k]] + 1;
            if (k < used && depth[k] > deepest)
                deepest = depth[k];
        }
        if (deepest <= max_bits) {
            for (int k = 0; k < used; k++)
                len[sym[k]] = (uint8_t)depth[k];
            return;
        }
        for (int k = 0; k < used; k++)
            w[sym[k]] = (w[sym[k]] + 1) / 2;
    }
}

/* The canonical codes for the lengths (RFC 1951, 3.2.2), bit-reversed for
 * writing least significant bit first. */
static void canonical_codes(const uint8_t *len, int n, uint32_t *code)
{
    int count[16] = {0}, next[16] = {0};
    for (int i = 0; i < n; i++)
        count[len[i]]++;
    count[0] = 0;
    for (int bits = 1, c = 0; bits < 16; bits++) {
        c = (c + count[bits - 1]) << 1;
        next[bits] = c;
    }
    for (int i = 0; i < n; i++)
        code[i] = len[i] ? reverse((uint32_t)next[len[i]]++, len[i]) : 0;
}

/* ------------------------------------------------------ deflate blocks */

/* One step of the copy-or-literal pass, as deflate will write it: in bits
 * 0..8 a symbol of the literal/length alphabet (a byte 0..255, or a copy's
 * length symbol 257..285), in 9..13 the length's extra bits, in 14..18 a
 * distance symbol and in 19..31 its extra bits. A literal has no distance:
 * it names NO_DIST, a symbol whose code has no bits, so that literals and
 * copies are written by the same steps. */
typedef uint32_t Token;
#define NO_DIST 30
#define BLOCK_TOKENS 32768
/* A block writes at most 48 bits per token (15 + 5 + 15 + 13 for a copy)
 * plus its code tables (at most about 570 bytes); then the Adler-32, and
 * put_bits stores 8 bytes where it may advance by fewer. */
#define ZBUF (BLOCK_TOKENS * 6 + 1024)

/* Write tokens as one deflate block with Huffman codes made for their
 * symbol counts lit_freq (the end-of-block symbol 256 included) and
 * dist_freq (BTYPE 10, RFC 1951, 3.2.7). */
static void write_block(Bits *b, const Token *tok, size_t nt, const uint32_t *lit_freq, const uint32_t *dist_freq,
                        int last)
{
    uint8_t lit_len[286], dist_len[NO_DIST + 1];
    uint32_t lit_code[286], dist_code[NO_DIST + 1];
    huffman_lengths(lit_freq, 286, 15, lit_len);
    huffman_lengths(dist_freq, 30, 15, dist_len);
    canonical_codes(lit_len, 286, lit_code);
    canonical_codes(dist_len, 30, dist_code);
    int hlit = 286, hdist = 30;
    while (hlit > 257 && lit_len[hlit - 1] == 0)
        hlit--;
    while (hdist > 1 && dist_len[hdist - 1] == 0)
        hdist--;

    /* The code lengths themselves, run-length coded: 16 = repeat the
     * previous length 3..6 times, 17 = 3..10 zeros, 18 = 11..138 zeros. */
    uint8_t all[286 + 30];
    int total = 0;
    for (int i = 0; i < hlit; i++)
        all[total++] = lit_len[i];
    for (int i = 0; i < hdist; i++)
        all[total++] = dist_len[i];
    uint8_t cl_sym[286 + 30], cl_extra[286 + 30];
    int ncl = 0;
    uint32_t cl_freq[19] = {0};
    for (int i = 0; i < total;) {
        int run = 1;
        while (i + run < total && all[i + run] == all[i])
            run++;
        if (all[i] == 0 && run >= 3) {
            const int r = run > 138 ? 138 : run;
            cl_sym[ncl] = r >= 11 ? 18 : 17;
            cl_extra[ncl++] = (uint8_t)(r >= 11 ? r - 11 : r - 3);
            i += r;
        } else if (all[i] != 0 && run >= 4) {
            const int r = run - 1 > 6 ? 6 : run - 1;
            cl_sym[ncl] = all[i];
            cl_extra[ncl++] = 0;
            cl_sym[ncl] = 16;
            cl_extra[ncl++] = (uint8_t)(r - 3);
            i += 1 + r;
        } else {
            cl_sym[ncl] = all[i];
            cl_extra[ncl++] = 0;
            i++;
        }
    }
    for (int k = 0; k < ncl; k++)
        cl_freq[cl_sym[k]]++;
    uint8_t cl_len[19];
    uint32_t cl_code[19];
    huffman_lengths(cl_freq, 19, 7, cl_len);
    canonical_codes(cl_len, 19, cl_code);
    static const int ORDER[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    int hclen = 19;
    while (hclen > 4 && cl_len[ORDER[hclen - 1]] == 0)
        hclen--;

    put_bits(b, last ? 1 : 0, 1); /* BFINAL */
    put_bits(b, 2, 2);            /* BTYPE 10: Huffman codes of our own */
    put_bits(b, (uint32_t)(hlit - 257), 5);
    put_bits(b, (uint32_t)(hdist - 1), 5);
    put_bits(b, (uint32_t)(hclen - 4), 4);
    for (int k = 0; k < hclen; k++)
        put_bits(b, cl_len[ORDER[k]], 3);
    static const int CL_EXTRA_BITS[19] = {[16] = 2, [17] = 3, [18] = 7};
    for (int k = 0; k < ncl; k++) {
        put_bits(b, cl_code[cl_sym[k]], cl_len[cl_sym[k]]);
        if (CL_EXTRA_BITS[cl_sym[k]])
            put_bits(b, cl_extra[k], CL_EXTRA_BITS[cl_sym[k]]);
    }

    /* Each token in one step: its symbol's code and extra bits, then its
     * distance's (for a literal, NO_DIST: nothing); at most 20 + 28 bits. */
    uint8_t lit_extra[286] = {0}, dist_extra[NO_DIST + 1] = {0};
    for (int k = 0; k < 29; k++)
        lit_extra[257 + k] = (uint8_t)LEN_EXTRA[k];
    for (int k = 0; k < NO_DIST; k++)
        dist_extra[k] = (uint8_t)DIST_EXTRA[k];
    dist_code[NO_DIST] = 0;
    dist_len[NO_DIST] = 0;
    Bits w = *b; /* a copy the compiler keeps in registers (stores through b->p might change *b) */
    for (size_t t = 0; t < nt; t++) {
        const uint32_t ls = tok[t] & 511, le = tok[t] >> 9 & 31, ds = tok[t] >> 14 & 31, de = tok[t] >> 19;
        const int lbits = lit_len[ls] + lit_extra[ls];
        put_bits(&w, (lit_code[ls] | (uint64_t)le << lit_len[ls]) | (dist_code[ds] | (uint64_t)de << dist_len[ds]) << lbits,
                 lbits + dist_len[ds] + dist_extra[ds]);
    }
    *b = w;
    put_bits(b, lit_code[256], lit_len[256]); /* end of block */
}

/* How many bytes from s[i] on repeat the bytes d back, at most max.
 * With SSE2 (every x86-64) 16 bytes are compared at a time and the first
 * differing one found from the lowest zero bit of the compare mask;
 * elsewhere 8 at a time, from the lowest set bit of the words' XOR (bytes
 * load low end first on little-endian machines), or byte by byte. */
static inline size_t match_length(const unsigned char *s, size_t i, size_t d, size_t max)
{
    size_t n = 0;
#ifdef __SSE2__
    for (; n + 16 <= max; n += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(s + i + n));
        const __m128i b = _mm_loadu_si128((const __m128i *)(s + i + n - d));
        const unsigned differ = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) ^ 0xFFFFu;
        if (differ)
            return n + (size_t)__builtin_ctz(differ);
    }
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; n + 8 <= max; n += 8) {
        uint64_t a, b;
        memcpy(&a, s + i + n, 8);
        memcpy(&b, s + i + n - d, 8);
        if (a != b)
            return n + (size_t)__builtin_ctzll(a ^ b) / 8;
    }
#endif
    while (n < max && s[i + n] == s[i + n - d])
        n++;
    return n;
}

#define HASH_BITS 15

/* Where the 4 bytes at p were last seen: a multiplicative hash. */
static inline uint32_t hash4(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return (v * 2654435761u) >> (32 - HASH_BITS);
}

/* The encoder's memory, reused from picture to picture (fresh pages are
 * slow to touch the first time: the kernel zeroes each one). */
struct PngWriter {
    Token tok[BLOCK_TOKENS];       /* a block's copies and literals */
    uint32_t last[1 << HASH_BITS]; /* each 4-byte hash's latest position + 1 */
    unsigned char z[ZBUF];         /* compressed bytes not yet written */
    uint32_t crc_table[8][256];
    CodeTables ct;
    FILE *f; /* the PNG being written */
    int ok;  /* 0 once a write has failed */
};

/* Tokens on their way into deflate blocks, with the counts of their
 * symbols: a block is written whenever BLOCK_TOKENS of them are waiting,
 * and its whole bytes go to the file as an IDAT chunk (a zlib stream may be
 * cut into chunks anywhere). */
typedef struct {
    PngWriter *pw;
    Bits *bits;
    size_t nt; /* waiting in pw->tok */
    uint32_t lit_freq[286], dist_freq[30];
} TokenQueue;

static void queue_reset(TokenQueue *q)
{
    q->nt = 0;
    memset(q->lit_freq, 0, sizeof q->lit_freq);
    memset(q->dist_freq, 0, sizeof q->dist_freq);
    q->lit_freq[256] = 1; /* end of block */
}

static void put_chunk(PngWriter *pw, const char *type, const unsigned char *data, size_t n);

/* Write what waits as a block; the last block stays in bits (padded to a
 * byte) for the Adler-32 to follow. */
static void flush_block(TokenQueue *q, int last)
{
    write_block(q->bits, q->pw->tok, q->nt, q->lit_freq, q->dist_freq, last);
    queue_reset(q);
    if (last) {
        align_bits(q->bits);
        return;
    }
    put_chunk(q->pw, "IDAT", q->bits->p, q->bits->n);
    q->bits->n = 0;
}

static inline void push(TokenQueue *q, Token t)
{
    q->pw->tok[q->nt++] = t;
    if (q->nt == BLOCK_TOKENS)
        flush_block(q, 0);
}

static inline void emit_literal(TokenQueue *q, unsigned char byte)
{
    q->lit_freq[byte]++;
    push(q, byte | (uint32_t)NO_DIST << 14);
}

/* A copy of len (3..258) bytes from d (1..32768) back. */
static inline void emit_copy(TokenQueue *q, int len, int d)
{
    const Code lc = length_code(&q->pw->ct, len), dc = distance_code(&q->pw->ct, d);
    q->lit_freq[lc.sym]++;
    q->dist_freq[dc.sym]++;
    push(q, lc.sym | (uint32_t)lc.extra << 9 | (uint32_t)dc.sym << 14 | (uint32_t)dc.extra << 19);
}

/* A run of len (>= 3) bytes repeating those d back, as copies of at most
 * 258 bytes (deflate's longest), none left shorter than 3. */
static void emit_run(TokenQueue *q, size_t len, size_t d)
{
    while (len > 0) {
        size_t piece = len > 258 ? 258 : len;
        if (len - piece > 0 && len - piece < 3)
            piece = len - 3;
        emit_copy(q, (int)piece, (int)d);
        len -= piece;
    }
}

/* The longest copy at s[i] of at most max bytes from one of the n
 * distances d[] (each at most 32768), the first of equally long ones:
 * its length (0 when none is at hand), its distance in *best_d. With SSE2
 * the first 16 bytes at s[i] are loaded once and compared with each
 * candidate's in one step; only a candidate equal in all 16 is followed
 * further. */
static inline size_t longest_copy(const unsigned char *s, size_t i, size_t max, const size_t *d, int n,
                                  size_t *best_d)
{
    size_t best = 0;
#ifdef __SSE2__
    if (max >= 16) {
        const __m128i here = _mm_loadu_si128((const __m128i *)(s + i));
        for (int k = 0; k < n && best < max; k++) {
            if (i < d[k])
                continue;
            const __m128i back = _mm_loadu_si128((const __m128i *)(s + i - d[k]));
            const unsigned differ = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(here, back)) ^ 0xFFFFu;
            const size_t len = differ ? (size_t)__builtin_ctz(differ) : 16 + match_length(s, i + 16, d[k], max - 16);
            if (len > best)
                best = len, *best_d = d[k];
        }
        return best;
    }
#endif
    for (int k = 0; k < n && best < max; k++) {
        if (i < d[k])
            continue;
        const size_t len = match_length(s, i, d[k], max);
        if (len > best)
            best = len, *best_d = d[k];
    }
    return best;
}

/* Compress s[0..n), rows of row bytes (filter byte + pixels), into deflate
 * blocks of up to BLOCK_TOKENS tokens.
 * A row equal to the row above (in a class-size heatmap about one row in
 * ten: the hatching moves a pixel every row) is found by one memcmp and
 * written as copies of it. Any other row goes byte by byte, copies never
 * running past its end. The copy candidates, in order: the pixel to the
 * left, eight pixels to the left (the hatching's period), the pixel above,
 * the pixel above-right (the hatching's diagonal), and, where none of these
 * gives 8 bytes, the last place the next 4 bytes
 * were seen (repeated digits and letters). A copy as long as deflate allows
 * is followed to where its run ends, without another search. Where no copy
 * is found (antialiased text, mostly), the byte and the rest of its pixel
 * are literals: copies of whole pixels start at a pixel's first byte. The
 * blocks go to pw's file as they are made; what is left of the last one
 * stays in b, padded to a whole byte. */
static void deflate_rows(PngWriter *pw, Bits *b, const unsigned char *s, size_t n, size_t row)
{
    uint32_t *last = pw->last;
    memset(last, 0, sizeof pw->last);
    TokenQueue q;
    q.pw = pw;
    q.bits = b;
    queue_reset(&q);
    const size_t cand[4] = {3, 24, row, row - 3};
    for (size_t start = 0; start < n && pw->ok; start += row) { /* after a failed write, no more work */
        const size_t end = start + row;
        if (start > 0 && row <= 32768 && memcmp(s + start, s + start - row, row) == 0) {
            emit_run(&q, row, row); /* row >= 4 */
            continue;
        }
        /* the first row has no row above; a row longer than 32768 bytes cannot copy from it */
        const int n_cand = start > 0 && row <= 32768 ? 4 : 2;
        for (size_t i = start; i < end;) {
            const size_t max = end - i < 258 ? end - i : 258;
            size_t best_d = 1;
            size_t best = longest_copy(s, i, max, cand, n_cand, &best_d);
            if (best < 8 && i + 4 <= n) {
                const uint32_t h = hash4(s + i);
                /* positions are kept mod 2^32: the bytes are compared anyway */
                const uint32_t d = (uint32_t)(i + 1) - last[h];
                if (last[h] > 0 && d >= 1 && d <= 32768 && d <= i) {
                    const size_t len = match_length(s, i, d, max);
                    if (len > best)
                        best = len, best_d = d;
                }
                last[h] = (uint32_t)(i + 1);
            }
            /* A copy from far back costs more bits: it pays from 4 bytes on. */
            if (best >= (best_d > 64 ? 4u : 3u)) {
                if (best == 258)
                    best += match_length(s, i + 258, best_d, end - i - 258);
                emit_run(&q, best, best_d);
                i += best;
            } else {
                /* up to the next pixel's first byte (pixels start 1 byte into the row) */
                const size_t next = i + 1 + (3 - (i - start) % 3) % 3;
                for (; i < next && i < end; i++)
                    emit_literal(&q, s[i]);
            }
        }
    }
    flush_block(&q, 1);
}

/* Adler-32 (RFC 1950, 8.2) of s[0..n): a = 1 + the sum of the bytes, b = the
 * sum of the successive a's, both mod 65521. Over a step of W bytes, b
 * grows by W a + sum (W - j) s[j] and a by sum s[j]: the same numbers as
 * byte by byte, without a chain of dependent additions. The remainders are
 * taken every 5536 bytes (a whole number of steps, within the 5552 that
 * keep b below 2^32). Each version below adds a chunk's whole steps to a
 * and b; adler32_by does the rest. */
typedef void AdlerSteps(const unsigned char *s, size_t steps, uint32_t *a, uint32_t *b);

static uint32_t adler32_by(const unsigned char *s, size_t n, size_t width, AdlerSteps *add_steps)
{
    uint32_t a = 1, b = 0;
    while (n > 0) {
        size_t chunk = n < 5536 ? n : 5536;
        n -= chunk;
        const size_t steps = chunk / width;
        add_steps(s, steps, &a, &b);
        s += steps * width;
        for (chunk -= steps * width; chunk > 0; chunk--) {
            a += *s++;
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    return (b << 16) | a;
}

/* Portable C, 32 bytes a step. */
static void adler_steps_c(const unsigned char *s, size_t steps, uint32_t *a, uint32_t *b)
{
    for (; steps > 0; steps--, s += 32) {
        uint32_t sum = 0, weighted = 0;
        for (int j = 0; j < 32; j++) {
            sum += s[j];
            weighted += (uint32_t)(32 - j) * s[j];
        }
        *b += 32 * *a + weighted;
        *a += sum;
    }
}

#ifdef __SSE2__
/* SSE2 (every x86-64), 16 bytes a step: _mm_sad_epu8 adds the bytes,
 * _mm_madd_epi16 multiplies them by their weights 16..1 and adds pairs.
 * Since a at step k is a0 plus the bytes of the steps before, b grows over
 * K steps by 16 (K a0 + the sum of those partial sums) + the weighted sums. */
static void adler_steps_sse2(const unsigned char *s, size_t steps, uint32_t *a, uint32_t *b)
{
    const __m128i zero = _mm_setzero_si128();
    const __m128i w_lo = _mm_setr_epi16(16, 15, 14, 13, 12, 11, 10, 9);
    const __m128i w_hi = _mm_setr_epi16(8, 7, 6, 5, 4, 3, 2, 1);
    __m128i sum = zero;      /* bytes so far, in two 64-bit lanes */
    __m128i partial = zero;  /* sum over steps of `sum` before the step */
    __m128i weighted = zero; /* the bytes times their weights, in four 32-bit lanes */
    for (size_t k = 0; k < steps; k++, s += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)s);
        partial = _mm_add_epi32(partial, sum);
        sum = _mm_add_epi32(sum, _mm_sad_epu8(v, zero));
        weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpacklo_epi8(v, zero), w_lo));
        weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_unpackhi_epi8(v, zero), w_hi));
    }
    uint32_t ls[4], lp[4], lw[4];
    _mm_storeu_si128((__m128i *)ls, sum);
    _mm_storeu_si128((__m128i *)lp, partial);
    _mm_storeu_si128((__m128i *)lw, weighted);
    *b += (uint32_t)(16 * ((uint64_t)steps * *a + lp[0] + lp[2]) + lw[0] + lw[1] + lw[2] + lw[3]);
    *a += ls[0] + ls[2];
}
#endif

#ifdef PNG_X86_AVX2
/* AVX2 (x86-64 processors since about 2013; checked as the program runs),
 * 32 bytes a step, the same way: _mm256_maddubs_epi16 multiplies the bytes
 * by their weights 32..1 and adds pairs, _mm256_madd_epi16 adds those
 * pairs again. */
__attribute__((target("avx2"))) static void adler_steps_avx2(const unsigned char *s, size_t steps, uint32_t *a,
                                                             uint32_t *b)
{
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi16(1);
    const __m256i weights = _mm256_setr_epi8(32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
                                             15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
    __m256i sum = zero, partial = zero, weighted = zero; /* as in adler_steps_sse2, in 8 lanes */
    for (size_t k = 0; k < steps; k++, s += 32) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)s);
        partial = _mm256_add_epi32(partial, sum);
        sum = _mm256_add_epi32(sum, _mm256_sad_epu8(v, zero));
        weighted = _mm256_add_epi32(weighted, _mm256_madd_epi16(_mm256_maddubs_epi16(v, weights), ones));
    }
    uint32_t ls[8], lp[8], lw[8];
    _mm256_storeu_si256((__m256i *)ls, sum);
    _mm256_storeu_si256((__m256i *)lp, partial);
    _mm256_storeu_si256((__m256i *)lw, weighted);
    uint64_t grow_b = 32 * ((uint64_t)steps * *a + lp[0] + lp[2] + lp[4] + lp[6]);
    for (int k = 0; k < 8; k++)
        grow_b += lw[k];
    *b += (uint32_t)grow_b;
    *a += ls[0] + ls[2] + ls[4] + ls[6];
}
#endif

uint32_t png_adler32(const unsigned char *s, size_t n, PngSimd at_most)
{
#ifdef PNG_X86_AVX2
    if (at_most >= PNG_SIMD_AVX2 && __builtin_cpu_supports("avx2"))
        return adler32_by(s, n, 32, adler_steps_avx2);
#endif
#ifdef __SSE2__
    if (at_most >= PNG_SIMD_SSE2)
        return adler32_by(s, n, 16, adler_steps_sse2);
#endif
    (void)at_most;
    return adler32_by(s, n, 32, adler_steps_c);
}

/* --------------------------------------------------------------- chunks */

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* CRC-32 tables (PNG specification, annex D): table[0][i] is the CRC
 * register after byte i, table[k][i] after byte i and k zero bytes, so
 * that eight bytes are taken in one step ("slicing by 8"): each byte's
 * effect comes from the table for its distance to the end of the step. */
static void crc_tables(uint32_t table[8][256])
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int j = 0; j < 8; j++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int i = 0; i < 256; i++)
            table[k][i] = (table[k - 1][i] >> 8) ^ table[0][table[k - 1][i] & 0xFF];
}

static uint32_t crc_update(uint32_t t[8][256], uint32_t c, const unsigned char *p, size_t n)
{
    for (; n >= 8; n -= 8, p += 8) {
        c ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        c = t[7][c & 0xFF] ^ t[6][(c >> 8) & 0xFF] ^ t[5][(c >> 16) & 0xFF] ^ t[4][c >> 24] ^ t[3][p[4]] ^
            t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    }
    for (; n > 0; n--)
        c = t[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c;
}

/* CRC-32 of the chunk type and data. */
static uint32_t chunk_crc(uint32_t table[8][256], const unsigned char *type, const unsigned char *data,
                          size_t n)
{
    return crc_update(table, crc_update(table, 0xFFFFFFFFu, type, 4), data, n) ^ 0xFFFFFFFFu;
}

/* Write one chunk to pw's file; after a failed write, nothing more is tried. */
static void put_chunk(PngWriter *pw, const char *type, const unsigned char *data, size_t n)
{
    unsigned char head[8], tail[4];
    put_u32(head, (uint32_t)n);
    memcpy(head + 4, type, 4);
    put_u32(tail, chunk_crc(pw->crc_table, (const unsigned char *)type, data, n));
    pw->ok = pw->ok && fwrite(head, 1, 8, pw->f) == 8 && (n == 0 || fwrite(data, 1, n, pw->f) == n) &&
             fwrite(tail, 1, 4, pw->f) == 4;
}

/* ------------------------------------------------------------------ files */

PngWriter *png_writer_new(void)
{
    PngWriter *pw = malloc(sizeof *pw);
    if (pw) {
        crc_tables(pw->crc_table);
        code_tables(&pw->ct);
    }
    return pw;
}

void png_writer_free(PngWriter *pw) { free(pw); }

int png_write(PngWriter *pw, const char *path, const unsigned char *rows, int w, int h, char *err, size_t errlen)
{
    if (w < 1 || h < 1 || w > PNG_MAX_SIDE || h > PNG_MAX_SIDE) {
        snprintf(err, errlen, "%s: a picture of %d x %d pixels (each side 1 to %d)", path, w, h, PNG_MAX_SIDE);
        return MHAVIZ_EINPUT;
    }
    const size_t row = (size_t)w * 3 + 1; /* filter byte + pixels */
    const size_t n = row * (size_t)h;
    static const unsigned char signature[8] = {137, 'P', 'N', 'G', '\r', '\n', 26, '\n'};
    unsigned char ihdr[13];
    put_u32(ihdr, (uint32_t)w);
    put_u32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8;  /* bits per channel */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering, one filter byte per row */
    ihdr[12] = 0; /* not interlaced */

    errno = 0;
    pw->f = fopen(path, "wb");
    if (!pw->f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return MHAVIZ_EIO;
    }
    pw->ok = fwrite(signature, 1, 8, pw->f) == 8;
    put_chunk(pw, "IHDR", ihdr, sizeof ihdr);
    Bits b = {pw->z, 0, 0, 0};
    b.p[b.n++] = 0x78; /* zlib: deflate, 32 KiB window */
    b.p[b.n++] = 0x01; /* no dictionary; 0x7801 is a multiple of 31 */
    deflate_rows(pw, &b, rows, n, row);
    put_u32(b.p + b.n, png_adler32(rows, n, PNG_SIMD_BEST));
    b.n += 4;
    put_chunk(pw, "IDAT", b.p, b.n);
    put_chunk(pw, "IEND", NULL, 0);
    int ok = pw->ok && fflush(pw->f) == 0;
    int saved = errno;
    struct stat st;
    const int regular = fstat(fileno(pw->f), &st) == 0 && S_ISREG(st.st_mode);
    if (fclose(pw->f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    pw->f = NULL;
    if (!ok) {
        if (regular)
            remove(path); /* no half-written picture left behind (a device such as /dev/full stays) */
        snprintf(err, errlen, "%s: cannot write the PNG: %s", path, strerror(saved ? saved : EIO));
        return MHAVIZ_EIO;
    }
    return MHAVIZ_OK;
}

int png_write_rows(const char *path, const unsigned char *rows, int w, int h, char *err, size_t errlen)
{
    PngWriter *pw = png_writer_new();
    if (!pw) {
        snprintf(err, errlen, "%s: out of memory encoding the PNG", path);
        return MHAVIZ_ENOMEM;
    }
    const int rc = png_write(pw, path, rows, w, h, err, errlen);
    png_writer_free(pw);
    return rc;
}
