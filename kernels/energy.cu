// A frame's energy on the device, written straight into the row-major capacity arrays
// the max-flow engine reads: noise gate, the data term (the learned background's
// distance with gain and shadows, or the colour models' table), the frame in the
// background's steady colours, contrast weights (σ estimated here where not fixed),
// temporal prior, hard seeds, and after the cut the background's slow adaptation. Integer arithmetic throughout, in the same order as the CPU energy
// (src/energy), so that both give identical capacities; tables (contrast weights,
// background cost, temporal ramp) are computed once on the host and uploaded.
//
// The background model's constants come from the host as defines: MEAN_BITS,
// GAIN_BITS, Z2_STEPS, STEADY_Z2, MAX_Z2, SHADOW_MIN, SHADOW_MAX, ADAPT_SHIFT.

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#define FAR_DISTANCE 0x3fffffffu

__device__ __forceinline__ u32 pixel_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

__device__ __forceinline__ u32 absdiff(u32 a, u32 b) { return a > b ? a - b : b - a; }

// Offset of direction d (Direction::ALL order) from the packed table: per direction
// four bits, dx + 1 in the low two and dy + 1 in the high two.
__device__ __forceinline__ int dir_dx(u32 packed, u32 d) { return (int)((packed >> (4 * d)) & 3u) - 1; }
__device__ __forceinline__ int dir_dy(u32 packed, u32 d) { return (int)((packed >> (4 * d + 2)) & 3u) - 1; }

// Noise gate: a pixel none of whose channels moved more than `threshold` from the held
// colour keeps the held colour; one that moved replaces it. `first` holds the frame.
// `moved` counts the pixels that moved (all of them on the first frame), for the host's
// rule of whether the frame is still enough to hold σ.
extern "C" __global__ void en_gate(u8 *rgb, u8 *held, u32 n, u32 threshold, u32 first, u64 *moved_count) {
    u32 i = pixel_index();
    bool moved = false;
    if (i < n) {
        u8 *p = rgb + 3 * i;
        u8 *h = held + 3 * i;
        moved = first != 0;
        for (int c = 0; c < 3; c++) moved |= absdiff(p[c], h[c]) > threshold;
        for (int c = 0; c < 3; c++) {
            if (moved) h[c] = p[c];
            else p[c] = h[c];
        }
    }
    // every lane of the warp takes part (no early return above)
    u32 lanes = __ballot_sync(0xffffffffu, moved);
    if ((threadIdx.x & 31) == 0 && lanes != 0) atomicAdd(moved_count, (u64)__popc(lanes));
}

// Sums of the seen and expected colours over the pixels that look like background
// (not foreground in the previous mask, background distance at most `threshold`),
// for the host's per-channel gain estimate: sums[0..3] seen, sums[3..6] expected.
extern "C" __global__ void en_gain_sums(const u8 *rgb, const u32 *mean, const u16 *z2, const u8 *prev,
                                        u32 has_prev, u32 n, u32 threshold, u64 *sums) {
    u64 local[6] = {0, 0, 0, 0, 0, 0};
    for (u32 i = pixel_index(); i < n; i += gridDim.x * blockDim.x) {
        if ((has_prev && prev[i] != 0) || z2[i] > threshold) continue;
        for (int c = 0; c < 3; c++) {
            local[c] += (u64)rgb[3 * i + c] << MEAN_BITS;
            local[3 + c] += mean[3 * i + c];
        }
    }
    for (int k = 0; k < 6; k++) {
        u64 v = local[k];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if ((threadIdx.x & 31) == 0 && v != 0) atomicAdd(&sums[k], v);
    }
}

// Squared colour distance of a pixel from the background in 1/Z2_STEPS steps of its
// noise variance; a darker or lighter pixel of the background's chromaticity (a
// shadow) counts by its distance from the background's colour line only.
__device__ u16 quantised_z2(const u32 seen[3], const u32 expected[3], u64 inv_var) {
    u64 dot = 0, bb = 0, full = 0, cc = 0;
    for (int c = 0; c < 3; c++) {
        dot += (u64)seen[c] * expected[c];
        bb += (u64)expected[c] * expected[c];
        u64 d = absdiff(seen[c], expected[c]);
        full += d * d;
        cc += (u64)seen[c] * seen[c];
    }
    u64 distance = full;
    u64 scaled = dot << GAIN_BITS;
    if (bb > 0 && (u64)SHADOW_MIN * bb <= scaled && scaled <= (u64)SHADOW_MAX * bb) {
        u64 line = dot * dot / bb;
        u64 off = cc > line ? cc - line : 0;
        distance = distance < off ? distance : off;
    }
    u64 q = (distance * inv_var) >> 32;
    u64 cap = (u64)MAX_Z2 * Z2_STEPS;
    return (u16)(q < cap ? q : cap);
}

// Background distance of every pixel under the frame's gain (z2, 0 where the pixel is
// within the steady band), and the frame with such pixels in the background's colours.
extern "C" __global__ void en_observe(const u8 *rgb, const u32 *mean, const u64 *inv_var, u16 *z2, u8 *steady,
                                      u32 n, u32 g0, u32 g1, u32 g2) {
    u32 i = pixel_index();
    if (i >= n) return;
    const u32 gain[3] = {g0, g1, g2};
    const u32 unit_half = 1u << (GAIN_BITS - 1);
    const u32 half = 1u << (MEAN_BITS + GAIN_BITS - 1);
    u32 expected[3], seen[3];
    for (int c = 0; c < 3; c++) {
        expected[c] = (mean[3 * i + c] * gain[c] + unit_half) >> GAIN_BITS;
        seen[c] = (u32)rgb[3 * i + c] << MEAN_BITS;
    }
    u16 q = quantised_z2(seen, expected, inv_var[i]);
    if ((u32)q < STEADY_Z2 * Z2_STEPS) q = 0;
    z2[i] = q;
    for (int c = 0; c < 3; c++) {
        u32 v = rgb[3 * i + c];
        if (q == 0) {
            v = (mean[3 * i + c] * gain[c] + half) >> (MEAN_BITS + GAIN_BITS);
            v = v < 255u ? v : 255u;
        }
        steady[3 * i + c] = (u8)v;
    }
}

// Contrast-sensitive weights of every arc, both directions of a pair alike: the table
// of the arc's length class at the squared colour difference, 0 past its end, and 0
// between two seeded pixels. `edges` holds `dirs` arrays of `n` in Direction order.
extern "C" __global__ void en_edges(const u8 *rgb, const u8 *seeds, u32 has_seeds, const int *straight,
                                    u32 straight_len, const int *diagonal, u32 diagonal_len, int *edges,
                                    u32 width, u32 height, u32 dirs, u32 offsets) {
    u32 i = pixel_index();
    u32 n = width * height;
    if (i >= n) return;
    int x = (int)(i % width), y = (int)(i / width);
    bool fixed = has_seeds && seeds[i] != 0;
    for (u32 d = 0; d < dirs; d++) {
        int dx = dir_dx(offsets, d), dy = dir_dy(offsets, d);
        int qx = x + dx, qy = y + dy;
        int v = 0;
        if (qx >= 0 && qy >= 0 && qx < (int)width && qy < (int)height) {
            u32 q = (u32)qy * width + (u32)qx;
            int d2 = 0;
            for (int c = 0; c < 3; c++) {
                int diff = (int)rgb[3 * i + c] - (int)rgb[3 * q + c];
                d2 += diff * diff;
            }
            bool diagonal_arc = dx != 0 && dy != 0;
            const int *table = diagonal_arc ? diagonal : straight;
            u32 len = diagonal_arc ? diagonal_len : straight_len;
            v = (u32)d2 < len ? table[d2] : 0;
            if (fixed && seeds[q] != 0) v = 0;
        }
        edges[d * n + i] = v;
    }
}

// Sum of the squared colour differences of the neighbour pairs of the forward
// directions (East, South, then SouthEast, SouthWest for 8C), for the host's σ.
extern "C" __global__ void en_sigma_sum(const u8 *rgb, u32 width, u32 height, u32 dirs, u32 offsets, u64 *sum) {
    u64 local = 0;
    const u32 n = width * height;
    for (u32 i = pixel_index(); i < n; i += gridDim.x * blockDim.x) {
        int x = (int)(i % width), y = (int)(i / width);
        for (u32 d = 0; d < dirs; d += 2) {
            int qx = x + dir_dx(offsets, d), qy = y + dir_dy(offsets, d);
            if (qx < 0 || qy < 0 || qx >= (int)width || qy >= (int)height) continue;
            u32 q = (u32)qy * width + (u32)qx;
            for (int c = 0; c < 3; c++) {
                int diff = (int)rgb[3 * i + c] - (int)rgb[3 * q + c];
                local += (u64)(diff * diff);
            }
        }
    }
    for (int o = 16; o > 0; o >>= 1) local += __shfl_down_sync(0xffffffffu, local, o);
    if ((threadIdx.x & 31) == 0 && local != 0) atomicAdd(sum, local);
}

// Chamfer (3-4) distance to the previous mask's boundary (pixels with a 4-neighbour of
// the other label are at 0), exact below 3 * `rounds`, which is all the temporal prior
// reads; larger distances come out no smaller than the true ones. One block per tile of
// DIST_W x DIST_H pixels: the tile and a halo of `rounds` pixels (a path of fewer arcs
// stays inside it) relax in shared memory `rounds` times, from one buffer into the
// other (Jacobi: every round fixes the distances one more arc away). The rounds start
// from the mask's boundary (`from_mask`) or from `start`, an earlier launch's result, so
// a long ramp is several launches with a halo of shared memory's size. A first launch's
// block whose region holds no boundary pixel writes the far distance at once: most of a
// frame lies farther than the ramp from the boundary.
#define DIST_W 32
#define DIST_H 8
extern "C" __global__ void en_distance(const u8 *mask, const u32 *start, u32 from_mask, u32 *distance, u32 width,
                                       u32 height, u32 rounds) {
    extern __shared__ u32 region[];
    const int r = (int)rounds;
    const int rw = DIST_W + 2 * r, rh = DIST_H + 2 * r;
    u32 *next = region + rw * rh;
    u8 *labels = (u8 *)(next + rw * rh);  // (rw + 2) x (rh + 2): the region and one more ring
    const int x0 = (int)(blockIdx.x * DIST_W) - r, y0 = (int)(blockIdx.y * DIST_H) - r;
    const int threads = DIST_W * DIST_H, t = (int)(threadIdx.y * DIST_W + threadIdx.x);
    // labels of the region and its ring; 2 = off the grid
    for (int k = t; k < (rw + 2) * (rh + 2); k += threads) {
        int x = x0 - 1 + k % (rw + 2), y = y0 - 1 + k / (rw + 2);
        bool on = x >= 0 && y >= 0 && x < (int)width && y < (int)height;
        labels[k] = on ? (mask[(u32)y * width + (u32)x] != 0) : 2;
    }
    __syncthreads();
    int boundary = 0;
    for (int k = t; k < rw * rh; k += threads) {
        int cx = k % rw + 1, cy = k / rw + 1;
        u8 v = labels[cy * (rw + 2) + cx];
        u32 d = FAR_DISTANCE;
        if (v != 2 && !from_mask) {
            d = start[(u32)(y0 + cy - 1) * width + (u32)(x0 + cx - 1)];
        } else if (v != 2) {
            u8 w = labels[cy * (rw + 2) + cx - 1], e = labels[cy * (rw + 2) + cx + 1];
            u8 n = labels[(cy - 1) * (rw + 2) + cx], s = labels[(cy + 1) * (rw + 2) + cx];
            bool differs = (w != 2 && w != v) || (e != 2 && e != v) || (n != 2 && n != v) || (s != 2 && s != v);
            if (differs) d = 0;
            boundary |= differs;
        }
        region[k] = d;
    }
    const int x = x0 + r + (int)threadIdx.x, y = y0 + r + (int)threadIdx.y;
    if (!__syncthreads_or(boundary) && from_mask) {
        // no boundary within the rounds' reach: the relaxation would leave all far
        if (x < (int)width && y < (int)height) distance[(u32)y * width + (u32)x] = FAR_DISTANCE;
        return;
    }
    u32 *from = region, *to = next;
    for (int round = 0; round < r; round++) {
        for (int k = t; k < rw * rh; k += threads) {
            int cx = k % rw, cy = k / rw;
            u32 best = from[k];
            if (labels[(cy + 1) * (rw + 2) + cx + 1] != 2) {
                for (int dy = -1; dy <= 1; dy++) {
                    for (int dx = -1; dx <= 1; dx++) {
                        int qx = cx + dx, qy = cy + dy;
                        if ((dx == 0 && dy == 0) || qx < 0 || qy < 0 || qx >= rw || qy >= rh) continue;
                        if (labels[(qy + 1) * (rw + 2) + qx + 1] == 2) continue;
                        u32 v = from[qy * rw + qx] + ((dx != 0 && dy != 0) ? 4u : 3u);
                        best = v < best ? v : best;
                    }
                }
            }
            to[k] = best;
        }
        __syncthreads();
        u32 *swap = from;
        from = to;
        to = swap;
    }
    if (x < (int)width && y < (int)height)
        distance[(u32)y * width + (u32)x] = from[(threadIdx.y + r) * rw + threadIdx.x + r];
}

// Terminal capacities: the colour models' capacity of each pixel's colour cell (the
// CPU's `cell`: `bits` high bits of each channel), the background cost of its
// distance, the temporal prior (towards the previous label, ramped near its boundary),
// folded into one terminal; a seeded pixel gets 1 + its arcs' sum towards its seed's
// terminal. Counts the terminals for the engine's schedule (census: any, supplies,
// deficits), summed in the block first: one atomic per warp on three words serialised.
extern "C" __global__ void en_terminals(const u8 *rgb, const int *colour_table, u32 colour_bits,
                                        u32 has_colour, const u16 *z2, u32 has_bg, const int *bg_table,
                                        u32 bg_len, const u8 *prev,
                                        const u32 *distance, u32 has_prior, const int *ramp, u32 ramp_len,
                                        int full, const u8 *seeds, u32 has_seeds, const int *edges, u32 dirs,
                                        int *source, int *sink, u32 n, u32 *census) {
    __shared__ u32 counts[3];
    if (threadIdx.x < 3) counts[threadIdx.x] = 0;
    __syncthreads();
    u32 i = pixel_index();
    bool valid = i < n;
    int s = 0, t = 0;
    if (valid) {
        int data = 0;
        if (has_colour) {
            const u32 s = 8 - colour_bits;
            const u32 cell = (((u32)rgb[3 * i] >> s) << (2 * colour_bits)) |
                             (((u32)rgb[3 * i + 1] >> s) << colour_bits) | ((u32)rgb[3 * i + 2] >> s);
            data += colour_table[cell];
        }
        if (has_bg) data += bg_table[z2[i] < bg_len ? z2[i] : bg_len - 1];
        if (has_prior) {
            u32 d = distance[i];
            int cost = d < ramp_len ? ramp[d] : full;
            data += prev[i] != 0 ? cost : -cost;
        }
        if (data > 0) s = data;
        else t = -data;
        u8 seed = has_seeds ? seeds[i] : 0;
        if (seed != 0) {
            int hard = 1;
            for (u32 d = 0; d < dirs; d++) hard += edges[d * n + i];
            if (seed == 1) { s = hard; t = 0; }
            else { s = 0; t = hard; }
        }
        source[i] = s;
        sink[i] = t;
    }
    u32 any = __ballot_sync(0xffffffffu, valid && (s != 0 || t != 0));
    u32 supply = __ballot_sync(0xffffffffu, valid && s > t);
    u32 deficit = __ballot_sync(0xffffffffu, valid && t > s);
    if ((threadIdx.x & 31) == 0) {
        if (any) atomicAdd(&counts[0], __popc(any));
        if (supply) atomicAdd(&counts[1], __popc(supply));
        if (deficit) atomicAdd(&counts[2], __popc(deficit));
    }
    __syncthreads();
    if (threadIdx.x < 3 && counts[threadIdx.x]) atomicAdd(&census[threadIdx.x], counts[threadIdx.x]);
}

// The background's slow adaptation after the cut: background pixels a little off the
// model step its mean towards them; a foreground pixel whose colour has not changed
// for `absorb` frames becomes background at once. `last` keeps this frame's colours.
extern "C" __global__ void en_adapt(const u8 *rgb, const u8 *mask, u32 *mean, const u16 *z2, u16 *still,
                                    u8 *last, u32 had_last, u32 n, u32 threshold, u32 g0, u32 g1, u32 g2,
                                    u32 absorb) {
    u32 i = pixel_index();
    if (i >= n) return;
    const u32 gain[3] = {g0 ? g0 : 1u, g1 ? g1 : 1u, g2 ? g2 : 1u};
    u32 target[3];
    for (int c = 0; c < 3; c++)
        target[c] = (((u32)rgb[3 * i + c] << (MEAN_BITS + GAIN_BITS)) + gain[c] / 2) / gain[c];
    u32 *m = mean + 3 * i;
    if (mask[i] == 0) {
        still[i] = 0;
        u32 q = z2[i];
        if (q >= 1 && q <= threshold) {
            for (int c = 0; c < 3; c++) {
                u32 gap = absdiff(m[c], target[c]);
                u32 step = gap >> ADAPT_SHIFT;
                u32 least = gap < 1u ? gap : 1u;
                step = step > least ? step : least;
                m[c] = target[c] > m[c] ? m[c] + step : m[c] - step;
            }
        }
    } else {
        bool stayed = had_last && last[3 * i] == rgb[3 * i] && last[3 * i + 1] == rgb[3 * i + 1] &&
                      last[3 * i + 2] == rgb[3 * i + 2];
        u32 count = stayed ? (u32)still[i] + 1u : 0u;
        if (count >= absorb) {
            for (int c = 0; c < 3; c++) m[c] = target[c];
            count = 0;
        }
        still[i] = (u16)count;
    }
    for (int c = 0; c < 3; c++) last[3 * i + c] = rgb[3 * i + c];
}
