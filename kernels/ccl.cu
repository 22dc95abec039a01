// Connected-component labelling by label propagation (after "GPU connected component
// labelling": label setup, links with max-gather, master/slave), here with minima so
// the result is the canonical labelling: every pixel gets the smallest row-major
// index of its component. Pixels p, q are connected when they are neighbours (4- or
// 8-connected) with equal values.
//
// 1. ccl_local: each 32x8 tile labels its own pixels in shared memory (iterated
//    1-gather until the tile is stable). Every label is then the index of a pixel of
//    the same component, which the master lookup below relies on.
// 2. ccl_links_init / ccl_links_jump: per direction, the furthest pixel reachable in a
//    straight line through connected pixels, by pointer jumping (log2 steps).
// 3. ccl_propagate: gather the minimum of the own label, the neighbours' labels and
//    the labels at the ends of the links, then look the result up once more as a
//    "master" pixel (its label is at least as small). Double-buffered; the host
//    repeats it until no label changes.

#define TILE_W 32
#define TILE_H 8

// Direction offsets in the order of the Rust `Direction::ALL`:
// E, W, S, N, SE, NW, SW, NE.
__constant__ int DX[8] = {1, -1, 0, 0, 1, -1, -1, 1};
__constant__ int DY[8] = {0, 0, 1, -1, 1, -1, 1, -1};

__device__ __forceinline__ bool inside(int x, int y, int w, int h) {
    return x >= 0 && y >= 0 && x < w && y < h;
}

extern "C" __global__ void ccl_local(const unsigned char* __restrict__ values,
                                     unsigned int* __restrict__ labels,
                                     int w, int h, int dirs) {
    __shared__ unsigned char s_val[TILE_H][TILE_W];
    __shared__ unsigned int s_lab[TILE_H][TILE_W];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = blockIdx.x * TILE_W + tx;
    const int y = blockIdx.y * TILE_H + ty;
    const bool in = inside(x, y, w, h);
    unsigned int lab = in ? (unsigned int)(y * w + x) : 0xffffffffu;
    s_val[ty][tx] = in ? values[y * w + x] : 0;
    s_lab[ty][tx] = lab;
    __syncthreads();
    bool changed;
    do {
        unsigned int best = lab;
        if (in) {
            const unsigned char v = s_val[ty][tx];
            for (int d = 0; d < dirs; ++d) {
                const int nx = tx + DX[d], ny = ty + DY[d];
                if (nx < 0 || ny < 0 || nx >= TILE_W || ny >= TILE_H) continue;
                if (!inside(x + DX[d], y + DY[d], w, h)) continue;
                if (s_val[ny][nx] == v) best = min(best, s_lab[ny][nx]);
            }
        }
        __syncthreads();
        changed = best < lab;
        lab = best;
        s_lab[ty][tx] = lab;
    } while (__syncthreads_or(changed));
    if (in) labels[y * w + x] = lab;
}

extern "C" __global__ void ccl_links_init(const unsigned char* __restrict__ values,
                                          unsigned int* __restrict__ links,
                                          int w, int h, int dirs) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (!inside(x, y, w, h)) return;
    const unsigned int n = (unsigned int)w * (unsigned int)h;
    const unsigned int p = y * w + x;
    const unsigned char v = values[p];
    for (int d = 0; d < dirs; ++d) {
        const int nx = x + DX[d], ny = y + DY[d];
        unsigned int target = p;
        if (inside(nx, ny, w, h) && values[ny * w + nx] == v) target = ny * w + nx;
        links[d * n + p] = target;
    }
}

extern "C" __global__ void ccl_links_jump(const unsigned int* __restrict__ in_links,
                                          unsigned int* __restrict__ out_links,
                                          int w, int h, int dirs) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (!inside(x, y, w, h)) return;
    const unsigned int n = (unsigned int)w * (unsigned int)h;
    const unsigned int p = y * w + x;
    for (int d = 0; d < dirs; ++d) {
        const unsigned int* link = in_links + d * n;
        out_links[d * n + p] = link[link[p]];
    }
}

extern "C" __global__ void ccl_propagate(const unsigned char* __restrict__ values,
                                         const unsigned int* __restrict__ links,
                                         const unsigned int* __restrict__ in_labels,
                                         unsigned int* __restrict__ out_labels,
                                         unsigned int* __restrict__ changed,
                                         int w, int h, int dirs) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (!inside(x, y, w, h)) return;
    const unsigned int n = (unsigned int)w * (unsigned int)h;
    const unsigned int p = y * w + x;
    const unsigned char v = values[p];
    const unsigned int old = in_labels[p];
    unsigned int lab = old;
    for (int d = 0; d < dirs; ++d) {
        const int nx = x + DX[d], ny = y + DY[d];
        if (inside(nx, ny, w, h) && values[ny * w + nx] == v) {
            lab = min(lab, in_labels[ny * w + nx]);
        }
        lab = min(lab, in_labels[links[d * n + p]]);
    }
    // Master/slave: the pixel our label names belongs to our component; its label
    // is never larger than its own index, so adopt it.
    lab = min(lab, in_labels[lab]);
    out_labels[p] = lab;
    if (lab != old) *changed = 1u;
}
