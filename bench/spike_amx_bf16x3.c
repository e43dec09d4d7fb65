/* Speed spike (P18, not mtscore code): a split-bfloat16 ("bf16x3") GEMM on Intel AMX.
 *
 *   C[M,N] (fp32) = A_hi B_hi + A_hi B_lo + A_lo B_hi,  x_hi = bf16(x), x_lo = bf16(x - x_hi)
 *
 * done as ONE bf16 GEMM over K' = 3K: A' = [A_hi, A_hi, A_lo] (M x 3K), B' = [B_hi; B_lo; B_hi]
 * (3K x N), with the fp32 tile accumulators kept (never rounded to bf16).  Henry, Tang & Heinecke,
 * "Leveraging the bfloat16 Artificial Intelligence Datatype For Higher-Precision Computations",
 * ARITH 2019.  Driven by bench/spike_amx_bf16x3.py (ctypes; plain C ABI).
 *
 * Build: cc -O3 -fPIC -shared -fopenmp -mamx-tile -mamx-bf16 -mavx512f -mavx512bw -mavx512bf16
 *
 * Layouts (bf16 stored as uint16_t):
 *   A' tiles: [Mp/16][K'/32][16 rows][32 k]        Mp = M rounded up to 32, padding rows zero
 *   B' tiles: [N/16][K'/32][16 k-pairs][16 cols][2] VNNI: k pairs interleaved per column
 * so each 16x32 A tile and each 32x16 B tile is 1 KB contiguous (row stride 64 bytes) and the tiles
 * of one 16-row strip / 16-column strip follow each other along K'.
 *
 * Kernel: 2x2 tiles of C (32x32 fp32) in tmm0-3, two A tiles in tmm4-5, two B tiles in tmm6-7; per
 * 32-wide step of K': 4 tile loads, 4 TDPBF16PS.  Blocking: OpenMP threads split the N blocks (nc
 * columns each, so threads never share C); within one: M in mc blocks, then K' in kc passes (the
 * mc x nc block of C stays in L2 between passes and is reloaded into the tiles), then 32-column
 * strips, then 32-row strips.  The "x2" functions further down (pack_a2, pack_b2, gemm_packed2)
 * compute the same product with hi and lo tiles stored once; they are the faster ones.
 *
 * All buffers must be 64-byte aligned: a 64-byte tile row straddling two cache lines halves the speed.
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

typedef struct {
    uint8_t palette_id;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tilecfg_t;

/* Once per process before any tile instruction; 0 on success. */
int amx_init(void) {
    return (int)syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
}

static void tile_config(void) {
    tilecfg_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette_id = 1;
    for (int t = 0; t < 8; t++) {
        cfg.rows[t] = 16;
        cfg.colsb[t] = 64;
    }
    _tile_loadconfig(&cfg);
}

/* fp32 -> bf16 bits, round to nearest even (torch's .bfloat16() for finite values). */
static inline uint16_t bf16_rne(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* 16 floats -> hi and lo bf16 (RNE, integer arithmetic: no denormal flushing). */
static inline void split16(__m512 x, __m256i *hi, __m256i *lo) {
    const __m512i bias = _mm512_set1_epi32(0x7FFF), one = _mm512_set1_epi32(1);
    const __m512i mask = _mm512_set1_epi32((int)0xFFFF0000u);
    __m512i u = _mm512_castps_si512(x);
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, bias), _mm512_and_si512(_mm512_srli_epi32(u, 16), one));
    __m512 xh = _mm512_castsi512_ps(_mm512_and_si512(r, mask));
    __m512i v = _mm512_castps_si512(_mm512_sub_ps(x, xh));
    __m512i s = _mm512_add_epi32(_mm512_add_epi32(v, bias), _mm512_and_si512(_mm512_srli_epi32(v, 16), one));
    *hi = _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
    *lo = _mm512_cvtepi32_epi16(_mm512_srli_epi32(s, 16));
}

/* Elements of the packed A' for M rows: Mp * 3K. */
int64_t packed_a_elems(int64_t M, int64_t K) { return ((M + 31) / 32 * 32) * 3 * K; }
int64_t packed_b_elems(int64_t K, int64_t N) { return 3 * K * N; }

/* W fp32 [K, N] row-major -> B' bf16 [N/16][3K/32][16][16][2] = [W_hi; W_lo; W_hi].  K % 32 == 0,
 * N % 32 == 0.  Once per weight, so plain scalar code. */
void pack_b(const float *W, int64_t K, int64_t N, uint16_t *Bp) {
    const int64_t KB = 3 * K / 32;
#pragma omp parallel for schedule(static)
    for (int64_t nb = 0; nb < N / 16; nb++) {
        for (int64_t kp = 0; kp < 3 * K; kp++) {
            const int64_t k = kp % K, part = kp / K; /* 0: hi, 1: lo, 2: hi */
            uint16_t *tile = Bp + (nb * KB + kp / 32) * 512;
            const int64_t row = (kp % 32) / 2, odd = kp % 2;
            for (int64_t j = 0; j < 16; j++) {
                const float w = W[k * N + nb * 16 + j];
                const uint16_t h = bf16_rne(w);
                const uint16_t v = part == 1 ? bf16_rne(w - bf16_to_f32(h)) : h;
                tile[row * 32 + j * 2 + odd] = v;
            }
        }
    }
}

/* A fp32 [M, K] row-major -> A' bf16 [Mp/16][3K/32][16][32] = [A_hi, A_hi, A_lo], padding rows 0. */
void pack_a(const float *A, int64_t M, int64_t K, uint16_t *Ap) {
    const int64_t KB = 3 * K / 32, K32 = K / 32, Mp = (M + 31) / 32 * 32;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < Mp; i++) {
        uint16_t *strip = Ap + (i / 16) * KB * 512 + (i % 16) * 32;
        if (i >= M) {
            for (int64_t kb = 0; kb < KB; kb++) memset(strip + kb * 512, 0, 64);
            continue;
        }
        const float *a = A + i * K;
        for (int64_t kb = 0; kb < K32; kb++) {
            __m256i h0, l0, h1, l1;
            split16(_mm512_loadu_ps(a + kb * 32), &h0, &l0);
            split16(_mm512_loadu_ps(a + kb * 32 + 16), &h1, &l1);
            __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1);
            __m512i l = _mm512_inserti64x4(_mm512_castsi256_si512(l0), l1, 1);
            _mm512_storeu_si512(strip + kb * 512, h);
            _mm512_storeu_si512(strip + (kb + K32) * 512, h);
            _mm512_storeu_si512(strip + (kb + 2 * K32) * 512, l);
        }
    }
}

/* The 32x32 block of C at (m0, n0) into tiles 0-3 (zeros when first); rows >= M go through buf.
 * Returns where the tiles are stored back from (C itself, or buf) and its row stride in *ldc. */
static inline float *c_block_begin(float *C, float *buf, int64_t M, int64_t N, int64_t m0, int64_t n0,
                                   int first, int64_t *ldc) {
    float *c = C + m0 * N + n0;
    *ldc = N * 4;
    if (m0 + 32 > M) {
        memset(buf, 0, 32 * 32 * sizeof(float));
        if (!first)
            for (int64_t r = 0; m0 + r < M; r++) memcpy(buf + r * 32, c + r * N, 32 * 4);
        c = buf;
        *ldc = 32 * 4;
    }
    if (first) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    } else {
        _tile_loadd(0, c, *ldc);
        _tile_loadd(1, c + 16, *ldc);
        _tile_loadd(2, (char *)c + 16 * *ldc, *ldc);
        _tile_loadd(3, (char *)c + 16 * *ldc + 64, *ldc);
    }
    return c;
}

/* Tiles 0-3 back to the block c_block_begin gave; the valid rows of buf into C. */
static inline void c_block_end(float *C, const float *buf, float *c, int64_t ldc, int64_t M, int64_t N,
                               int64_t m0, int64_t n0) {
    _tile_stored(0, c, ldc);
    _tile_stored(1, c + 16, ldc);
    _tile_stored(2, (char *)c + 16 * ldc, ldc);
    _tile_stored(3, (char *)c + 16 * ldc + 64, ldc);
    if (c == buf)
        for (int64_t r = 0; m0 + r < M; r++) memcpy(C + (m0 + r) * N + n0, buf + r * 32, 32 * 4);
}

/* C tiles 0-3 (2x2 of 16x16) += the 32 rows at a0/a1 (tiles 4, 5) x the 32 columns at b0/b1 (tiles 6,
 * 7), one 32-wide k step; the tiles 4-7 keep these operands afterwards. */
static inline void tiles_2x2(const uint16_t *a0, const uint16_t *a1, const uint16_t *b0, const uint16_t *b1) {
    _tile_loadd(4, a0, 64);
    _tile_loadd(6, b0, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(7, b1, 64);
    _tile_dpbf16ps(1, 4, 7);
    _tile_loadd(5, a1, 64);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
}

typedef void (*kernel_fn)(const uint16_t *, const uint16_t *, float *, int64_t, int64_t, int64_t, int64_t,
                          int64_t, int64_t, int64_t, int);

/* C fp32 [M, N] over KB k-steps of the packed operands, by kern on 32x32 blocks: threads over
 * column blocks of nc, then row blocks of mc, then k blocks of kcb steps (C accumulates across them). */
static void gemm_blocks(kernel_fn kern, const uint16_t *Ap, const uint16_t *Bp, float *C, int64_t M,
                        int64_t N, int64_t KB, int64_t mc, int64_t nc, int64_t kcb) {
    const int64_t Mp = (M + 31) / 32 * 32;
    const int64_t nblocks = (N + nc - 1) / nc;
#pragma omp parallel
    {
        tile_config();
#pragma omp for schedule(static)
        for (int64_t jb = 0; jb < nblocks; jb++) {
            const int64_t n0 = jb * nc, n1 = n0 + nc < N ? n0 + nc : N;
            for (int64_t i0 = 0; i0 < Mp; i0 += mc) {
                const int64_t i1 = i0 + mc < Mp ? i0 + mc : Mp;
                for (int64_t kb0 = 0; kb0 < KB; kb0 += kcb) {
                    const int64_t kb1 = kb0 + kcb < KB ? kb0 + kcb : KB;
                    for (int64_t n = n0; n < n1; n += 32)
                        for (int64_t m = i0; m < i1; m += 32)
                            kern(Ap, Bp, C, M, N, KB, m, n, kb0, kb1, kb0 == 0);
                }
            }
        }
        _tile_release();
    }
}

/* C block 32x32 at (m0, n0) += A'[m0:m0+32, kb0:kb1] B'[kb0:kb1, n0:n0+32] (in 32-wide k steps);
 * first: start from zero, not from C.  Rows >= M go through a local buffer. */
static void kernel_32x32(const uint16_t *Ap, const uint16_t *Bp, float *C, int64_t M, int64_t N,
                         int64_t KB, int64_t m0, int64_t n0, int64_t kb0, int64_t kb1, int first) {
    float buf[32 * 32];
    int64_t ldc;
    float *c = c_block_begin(C, buf, M, N, m0, n0, first, &ldc);
    const uint16_t *a0 = Ap + ((m0 / 16) * KB + kb0) * 512, *a1 = a0 + KB * 512;
    const uint16_t *b0 = Bp + ((n0 / 16) * KB + kb0) * 512, *b1 = b0 + KB * 512;
    for (int64_t kb = kb0; kb < kb1; kb++) {
        tiles_2x2(a0, a1, b0, b1);
        a0 += 512;
        a1 += 512;
        b0 += 512;
        b1 += 512;
    }
    c_block_end(C, buf, c, ldc, M, N, m0, n0);
}

/* C fp32 [M, N] = A' B' over K' = 3K.  mc, nc: multiples of 32; kc: multiple of 32 (of K'). */
void gemm_packed(const uint16_t *Ap, const uint16_t *Bp, float *C, int64_t M, int64_t K, int64_t N,
                 int64_t mc, int64_t nc, int64_t kc) {
    gemm_blocks(kernel_32x32, Ap, Bp, C, M, N, 3 * K / 32, mc, nc, kc / 32);
}

/* Per call: pack A into the caller's scratch Ap, then the GEMM. */
void gemm_bf16x3(const float *A, const uint16_t *Bp, float *C, uint16_t *Ap, int64_t M, int64_t K,
                 int64_t N, int64_t mc, int64_t nc, int64_t kc) {
    pack_a(A, M, K, Ap);
    gemm_packed(Ap, Bp, C, M, K, N, mc, nc, kc);
}

/* ---- Variant "x2": the same product without duplicating A_hi and B_hi in memory. ----
 * A'' tiles [Mp/16][K/32][2][16][32] (hi tile, then lo tile, per 32 k), B'' tiles
 * [N/16][K/32][2][16][16][2] (hi, lo).  Per 32 k the kernel runs Ahi*Bhi, Alo*Bhi, Ahi*Blo:
 * 10 tile loads for 12 TDPBF16PS (the K' = 3K layout needs 12), and packed A/B are 2/3 the size. */
int64_t packed_a2_elems(int64_t M, int64_t K) { return ((M + 31) / 32 * 32) * 2 * K; }

void pack_b2(const float *W, int64_t K, int64_t N, uint16_t *Bp) {
    const int64_t K32 = K / 32;
#pragma omp parallel for schedule(static)
    for (int64_t nb = 0; nb < N / 16; nb++) {
        for (int64_t k = 0; k < K; k++) {
            uint16_t *hi = Bp + ((nb * K32 + k / 32) * 2) * 512, *lo = hi + 512;
            const int64_t row = (k % 32) / 2, odd = k % 2;
            for (int64_t j = 0; j < 16; j++) {
                const float w = W[k * N + nb * 16 + j];
                const uint16_t h = bf16_rne(w);
                hi[row * 32 + j * 2 + odd] = h;
                lo[row * 32 + j * 2 + odd] = bf16_rne(w - bf16_to_f32(h));
            }
        }
    }
}

void pack_a2(const float *A, int64_t M, int64_t K, uint16_t *Ap) {
    const int64_t K32 = K / 32, Mp = (M + 31) / 32 * 32;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < Mp; i++) {
        uint16_t *strip = Ap + (i / 16) * K32 * 1024 + (i % 16) * 32;
        if (i >= M) {
            for (int64_t kb = 0; kb < 2 * K32; kb++) memset(strip + kb * 512, 0, 64);
            continue;
        }
        const float *a = A + i * K;
        for (int64_t kb = 0; kb < K32; kb++) {
            __m256i h0, l0, h1, l1;
            split16(_mm512_loadu_ps(a + kb * 32), &h0, &l0);
            split16(_mm512_loadu_ps(a + kb * 32 + 16), &h1, &l1);
            _mm512_storeu_si512(strip + kb * 1024, _mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1));
            _mm512_storeu_si512(strip + kb * 1024 + 512, _mm512_inserti64x4(_mm512_castsi256_si512(l0), l1, 1));
        }
    }
}

static void kernel2_32x32(const uint16_t *Ap, const uint16_t *Bp, float *C, int64_t M, int64_t N,
                          int64_t K32, int64_t m0, int64_t n0, int64_t kb0, int64_t kb1, int first) {
    float buf[32 * 32];
    int64_t ldc;
    float *c = c_block_begin(C, buf, M, N, m0, n0, first, &ldc);
    const uint16_t *a0 = Ap + ((m0 / 16) * K32 + kb0) * 1024, *a1 = a0 + K32 * 1024;
    const uint16_t *b0 = Bp + ((n0 / 16) * K32 + kb0) * 1024, *b1 = b0 + K32 * 1024;
    for (int64_t kb = kb0; kb < kb1; kb++) {
        tiles_2x2(a0, a1, b0, b1); /* A_hi x B_hi */
        _tile_loadd(6, b0 + 512, 64); /* A_hi x B_lo */
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(2, 5, 6);
        _tile_loadd(7, b1 + 512, 64);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(3, 5, 7);
        tiles_2x2(a0 + 512, a1 + 512, b0, b1); /* A_lo x B_hi */
        a0 += 1024;
        a1 += 1024;
        b0 += 1024;
        b1 += 1024;
    }
    c_block_end(C, buf, c, ldc, M, N, m0, n0);
}

/* Blocks as gemm_packed; kc counts K (not K'): one step of it is 3 bf16 passes. */
void gemm_packed2(const uint16_t *Ap, const uint16_t *Bp, float *C, int64_t M, int64_t K, int64_t N,
                  int64_t mc, int64_t nc, int64_t kc) {
    gemm_blocks(kernel2_32x32, Ap, Bp, C, M, N, K / 32, mc, nc, kc / 32);
}

void gemm2_bf16x3(const float *A, const uint16_t *Bp, float *C, uint16_t *Ap, int64_t M, int64_t K,
                  int64_t N, int64_t mc, int64_t nc, int64_t kc) {
    pack_a2(A, M, K, Ap);
    gemm_packed2(Ap, Bp, C, M, K, N, mc, nc, kc);
}
