// Runs the CUDA engine's kernels on the host (see shim.h) with the host-driven schedule
// of src/maxflow/cuda/schedule.rs: exact global relabels by level-synchronous tile rounds,
// then discharge rounds (one phase per tile colour) until the next one is due.
//
//   driver FILE.max[.gz] MASK_OUT [budget N] [gr N] [work N] [region N] [revisit N] [conc 0|1]
//          [next FILE2.max[.gz]]...
//
// Prints one line of `key value` pairs (flow, rounds, global relabels, ...) and writes the
// pixels that cannot reach t (255) or can (0), row-major, to MASK_OUT. Each `next` file
// (same size and connectivity) is then solved as a dynamic update of the one before
// (pr_reparam*, then the same schedule; afresh where an offset would overflow, as the
// engine does): one more line each, its mask in MASK_OUT.1, .2, ...
#include "shim.h"
#include KERNEL_SOURCE
#include <string>
#include <vector>

Dim3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0};

struct Problem {
    u32 w = 0, h = 0, c = 0;
    std::vector<int> src, snk, edges;
};

// The grid dialect of DIMACS as the project's files use it (duplicate arcs add up).
static bool read_dimacs(const char* path, Problem& p) {
    std::string cmd = std::string("gzip -dcf '") + path + "'";
    FILE* f = popen(cmd.c_str(), "r");
    if (!f) return false;
    const int DX[8] = {1, -1, 0, 0, 1, -1, -1, 1}, DY[8] = {0, 0, 1, -1, 1, -1, 1, -1};
    char line[256];
    u64 n = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "c grid", 6)) {
            if (sscanf(line + 6, "%u %u %u", &p.w, &p.h, &p.c) != 3) return false;
            n = (u64)p.w * p.h;
            p.src.assign(n, 0);
            p.snk.assign(n, 0);
            p.edges.assign(n * p.c, 0);
        } else if (line[0] == 'a' && n) {
            unsigned long long u, v;
            long long cap;
            if (sscanf(line + 1, "%llu %llu %lld", &u, &v, &cap) != 3) return false;
            if (u == n + 1) p.src[v - 1] += (int)cap;
            else if (v == n + 2) p.snk[u - 1] += (int)cap;
            else {
                const long long a = (long long)u - 1, b = (long long)v - 1;
                const long long ax = a % p.w, ay = a / p.w, bx = b % p.w, by = b / p.w;
                for (u32 d = 0; d < p.c; ++d)
                    if (bx - ax == DX[d] && by - ay == DY[d]) p.edges[(u64)d * n + a] += (int)cap;
            }
        }
    }
    return pclose(f) == 0 && n > 0;
}

template <class T> static T* zeroed(size_t n) { return (T*)calloc(n ? n : 1, sizeof(T)); }

// Runs the host-driven schedule from the state init or reparam left: global relabels, then
// discharge rounds, until a relabel finds no active tile; writes the mask and prints a line.
template <int D>
static int run_schedule(Params& p, const char* mask_out, const char* kind) {
    Ctl* c = p.ctl;
    u32 rounds = 0, global_relabels = 0, bfs_rounds = 0, phases = 0;
    u64 path_steps = 0;  // sum over phases of the most steps one tile ran: the critical path
    for (;;) {
        u32 prev = c->gr_changes;
        for (u32 r = 0;; ++r) {
            for (u32 b = 0; b < p.ntiles; ++b) {
                blockIdx.x = b;
                gr_round_entry<D>(p, r);
            }
            ++bfs_rounds;
            if (c->gr_changes == prev) break;
            prev = c->gr_changes;
        }
        ++global_relabels;
        if (c->active_tiles == 0) break;
        const u64 work0 = c->relabels, work_cap = (u64)p.npix * p.gr_work_num / 16;
        for (u32 since = 0;;) {
            const u32 revisit = p.revisit_every && rounds % p.revisit_every == p.revisit_every - 1;
            const u32 nphases = p.concurrent ? 1 : MAX_COLOURS;
            for (u32 ph = 0; ph < nphases; ++ph) {
                const u32 first = p.concurrent ? 0 : p.colour_start[ph];
                const u32 count = p.concurrent ? p.ntiles : p.colour_start[ph + 1] - first;
                u64 most = 0;
                for (u32 b = 0; b < count; ++b) {
                    blockIdx.x = b;
                    const u64 s0 = c->steps;
                    discharge_entry<D>(p, first, revisit, since > 0);
                    if (c->steps - s0 > most) most = c->steps - s0;
                }
                path_steps += most;
                ++phases;
            }
            ++rounds;
            ++since;
            if (rounds >= p.max_rounds) {
                fprintf(stderr, "no convergence within %u rounds\n", rounds);
                return 1;
            }
            if (c->active_tiles == 0 && c->mail_tiles == 0) break;
            if (since >= p.gr_rounds) break;
            if (c->relabels - work0 > work_cap) break;
        }
    }
    for (u32 b = 0; b < p.ntiles; ++b) mask_tile(p, b);
    FILE* m = fopen(mask_out, "wb");
    if (!m || fwrite(p.mask, 1, (size_t)p.width * p.height, m) != (size_t)p.width * p.height) return 1;
    fclose(m);
    printf("%s flow %llu rounds %u global_relabels %u bfs_rounds %u phases %u visits %u steps %llu path_steps %llu "
           "offset %llu changed %llu\n",
           kind, c->sink_flow - p.sums[SUM_OFFSET], rounds, global_relabels, bfs_rounds, phases, c->tile_visits, c->steps,
           path_steps, p.sums[SUM_OFFSET], p.sums[SUM_CHANGED]);
    return 0;
}

template <int D>
static int solve(const Problem& pr, const std::vector<Problem>& next, const char* mask_out, int argc, char** argv) {
    Params p{};
    p.width = pr.w;
    p.height = pr.h;
    p.tiles_x = (pr.w + TW - 1) / TW;
    p.tiles_y = (pr.h + TH - 1) / TH;
    p.ntiles = p.tiles_x * p.tiles_y;
    p.npix = p.ntiles * TP;
    p.hmax = pr.w * pr.h + 1;
    std::vector<u32> tiles;  // grouped by colour, as Tiling::colour_lists does
    for (u32 colour = 0; colour < MAX_COLOURS; ++colour) {
        p.colour_start[colour] = (u32)tiles.size();
        for (u32 t = 0; t < p.ntiles; ++t) {
            const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
            const u32 c = (tx + ty) & 1;
            if (c == colour) tiles.push_back(t);
        }
    }
    p.colour_start[MAX_COLOURS] = (u32)tiles.size();
    p.step_budget = 32;
    p.revisit_every = 8;
    p.gr_rounds = 2;
    p.gr_work_num = 16;
    p.max_rounds = 1 << 20;
    for (int a = 3; a + 1 < argc; a += 2) {
        const std::string k = argv[a];
        const u32 v = (u32)atoi(argv[a + 1]);
        if (k == "budget") p.step_budget = v;
        else if (k == "gr") p.gr_rounds = v;
        else if (k == "work") p.gr_work_num = v;
        else if (k == "region") p.region_every = v;
        else if (k == "revisit") p.revisit_every = v;
        else if (k == "conc") p.concurrent = v;
        else if (k == "next") continue;
        else {
            fprintf(stderr, "unknown option %s\n", argv[a]);
            return 2;
        }
    }
    p.res = zeroed<u32>((size_t)D * p.npix);
    p.tres = zeroed<u32>(p.npix);
    p.exc = zeroed<u64>(p.npix);
    p.h = zeroed<u32>(p.npix);
    p.rmask = zeroed<u16>(p.npix);
    p.gh = zeroed<u64>(p.npix);
    p.pend = zeroed<u32>((size_t)p.ntiles * D * PSLOTS);
    p.tile_active = zeroed<u32>(p.ntiles);
    p.tile_mail = zeroed<u32>(p.ntiles);
    p.tile_dirty = zeroed<u32>(2 * (size_t)p.ntiles);
    p.tile_round = zeroed<u32>(p.ntiles);
    p.tile_calm = zeroed<u32>(p.ntiles);
    p.qcap = 1;
    p.queue = zeroed<u32>(1);
    p.tile_q = zeroed<u32>(2 * (size_t)p.ntiles);
    p.activity = zeroed<u32>(p.ntiles);
    p.colour_tiles = tiles.data();
    p.ctl = zeroed<Ctl>(1);
    p.in_src = pr.src.data();
    p.in_sink = pr.snk.data();
    p.in_edges = pr.edges.data();
    p.mask = zeroed<unsigned char>((size_t)pr.w * pr.h);
    p.off = zeroed<u32>(p.npix);
    p.sums = zeroed<u64>(REPARAM_SUMS);
    for (u32 b = 0; b < p.ntiles; ++b) {
        blockIdx.x = b;
        init_entry<D>(p);
    }
    if (int rc = run_schedule<D>(p, mask_out, "solve")) return rc;
    const Problem* last = &pr;
    for (size_t k = 0; k < next.size(); ++k) {
        const Problem& n = next[k];
        if (n.w != pr.w || n.h != pr.h || n.c != pr.c) {
            fprintf(stderr, "next problem %zu has another shape\n", k + 1);
            return 2;
        }
        p.old_src = last->src.data();
        p.old_sink = last->snk.data();
        p.old_edges = last->edges.data();
        p.in_src = n.src.data();
        p.in_sink = n.snk.data();
        p.in_edges = n.edges.data();
        memset(p.ctl, 0, sizeof(Ctl));
        memset(p.sums, 0, REPARAM_SUMS * sizeof(u64));
        for (u32 b = 0; b < p.ntiles; ++b) {
            blockIdx.x = b;
            reparam_entry<D>(p);
        }
        const char* kind = "update";
        if (p.sums[SUM_OVERFLOW]) {  // as the engine does: solve this one afresh
            memset(p.ctl, 0, sizeof(Ctl));
            memset(p.sums, 0, REPARAM_SUMS * sizeof(u64));
            for (u32 b = 0; b < p.ntiles; ++b) {
                blockIdx.x = b;
                init_entry<D>(p);
            }
            kind = "fresh";
        }
        const std::string out = std::string(mask_out) + "." + std::to_string(k + 1);
        if (int rc = run_schedule<D>(p, out.c_str(), kind)) return rc;
        last = &n;
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: driver FILE MASK_OUT [budget N] [gr N] [work N] [region N] [revisit N] [conc 0|1] [next FILE]...\n");
        return 2;
    }
    Problem pr;
    if (!read_dimacs(argv[1], pr) || (pr.c != 4 && pr.c != 8)) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    std::vector<Problem> next;
    for (int a = 3; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "next")) continue;
        next.emplace_back();
        if (!read_dimacs(argv[a + 1], next.back())) {
            fprintf(stderr, "cannot read %s\n", argv[a + 1]);
            return 2;
        }
    }
    return pr.c == 4 ? solve<4>(pr, next, argv[2], argc, argv) : solve<8>(pr, next, argv[2], argc, argv);
}
