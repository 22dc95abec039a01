// ---------------------------------------------------------------------------------
// Grid barrier for the persistent kernel (all blocks co-resident: cooperative launch).
// The last block to arrive copies the counters into Ctl::snap before releasing.
// Returns false when it waited too long (the solve is then abandoned with ST_HANG).

#ifndef LIVECUT_EMU
// Whether a wait that began at `start` has gone on too long (~20 s: something is broken);
// if so the solve is marked hung.
__device__ __forceinline__ bool waited_too_long(Ctl* c, long long start) {
    if (clock64() - start <= 40000000000LL) return false;
    atomicExch(&c->status, ST_HANG);
    return true;
}

// Nanoseconds of the device's global timer (the same clock on every SM).
__device__ __forceinline__ u64 now_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The flow-rate rule's bookkeeping at a grid barrier (`rule`, the same in every block):
// RULE_START as a global relabel begins, RULE_MARK as it ends, RULE_DECIDE as a discharge
// round by phases ends: another round is wanted (Snap::more) while tiles are active or
// mailed, the local relabels since the global one stay under its work cap, and the last
// round sent flow to t at a rate of at least gr_rate_pct % of the rate since the global
// relabel began (its cost included): the marginal rate against the cycle's average, at
// which a renewal process's long-run rate is best. The first two tests repeat the round
// loop's own: without them the kernel was slower from code placement alone
// (kernels/NOTES.md, relabel_rate_rounds).
#define RULE_START 1u
#define RULE_MARK 2u
#define RULE_DECIDE 3u
// Called by the last block at the barrier; returns whether another round is wanted.
__device__ __forceinline__ u32 rate_rule(const Params* p, Ctl* c, u32 rule) {
    volatile Ctl* vc = c;
    const u64 t = now_ns(), f = vc->sink_flow;
    bool more = false;
    if (rule == RULE_DECIDE && (vc->active_tiles || vc->mail_tiles) &&
        vc->relabels - vc->rate_w0 <= (u64)p->npix * p->gr_work_num / 16u) {
        const double df = (double)(f - vc->rate_f), dt = (double)(t - vc->rate_t);
        const double af = (double)(f - vc->rate_f0), at = (double)(t - vc->rate_t0);
        more = df > 0.0 && df * at * 100.0 >= (double)p->gr_rate_pct * af * dt;
    }
    if (rule == RULE_START) {
        c->rate_t0 = t;
        c->rate_f0 = f;
    }
    if (rule == RULE_MARK) c->rate_w0 = vc->relabels;
    c->rate_t = t;
    c->rate_f = f;
    return more;
}

// `next` (the same in every block): 0 keeps the work queue as it is; NEXT_PASS empties
// it for a new pass (new stamp, one token per block); NEXT_GR also starts a new global
// relabel epoch. The last block to arrive does this while every other block waits.
// A block arrives with one acquire-release atomic and takes the barrier's number from the
// count it returns (every block arrives at every barrier), with no load of the
// generation and fence first; the last block reads the counters it copies once and
// releases with no fence of its own, and a waiter reads the copy right after its
// acquiring poll: a round trip less each. Other forms tried: kernels/NOTES.md, grid_sync.
#define NEXT_PASS 1u
#define NEXT_GR 2u
__device__ bool grid_sync(Ctl* c, u32 nblocks, Snap* s_snap, u32* s_ok, u32 next = 0,
                          const Params* rp = nullptr, u32 rule = 0) {
    __syncthreads();
    if (threadIdx.x == 0) {
        PROFILE(const u64 b0 = clock64();)
        u32 ok = 1;
        const u32 arrived = atom_add_acq_rel(&c->bar_count, 1u);
        const u32 gen = arrived / nblocks;  // barriers completed before this one
        if (arrived % nblocks == nblocks - 1) {
            // far from 2^32 the count starts again, as bar_gen does: no block arrives
            // at the next barrier before this one's release
            const bool restart = arrived >= 0x80000000u;
            volatile Ctl* vc = c;
            const u64 relabels = vc->relabels;
            const u32 active = vc->active_tiles, mail = vc->mail_tiles;
            u32 stamp = vc->stamp, epoch = vc->gr_epoch;
            c->snap.more = rule ? rate_rule(rp, c, rule) : 0u;
            c->snap.late = rp && rp->budget_ns != NO_BUDGET && now_ns() >= vc->deadline_ns;
            if (next) {
                c->q_head = 0;
                c->q_tail = 0;
                c->q_pending = nblocks;
                c->stamp = ++stamp;
                if (next == NEXT_GR) c->gr_epoch = ++epoch;
            }
            c->snap.relabels = relabels;
            c->snap.active_tiles = active;
            c->snap.mail_tiles = mail;
            c->snap.stamp = stamp;
            c->snap.gr_epoch = epoch;
            if (restart) c->bar_count = 0;
            st_release(&c->bar_gen, restart ? 0u : gen + 1);
        } else {
            const long long start = clock64();
            while (ld_acquire(&c->bar_gen) == gen) {
                __nanosleep(20);
                if (waited_too_long(c, start)) {
                    ok = 0;
                    break;
                }
            }
        }
        volatile Snap* vs = &c->snap;
        s_snap->relabels = vs->relabels;
        s_snap->active_tiles = vs->active_tiles;
        s_snap->mail_tiles = vs->mail_tiles;
        s_snap->stamp = vs->stamp;
        s_snap->gr_epoch = vs->gr_epoch;
        s_snap->more = vs->more;
        s_snap->late = vs->late;
        if (ld_acquire(&c->status) == ST_HANG) ok = 0;
        *s_ok = ok;
        PROFILE(atomicAdd(&c->barrier_cycles, (u64)(clock64() - b0));)
    }
    __syncthreads();
    return *s_ok != 0;
}
#endif

