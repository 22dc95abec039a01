// A frame's energy in wgpu compute shaders, for every GPU (Vulkan, Metal, DirectX 12):
// the port of `energy.cu`, with its integer arithmetic in the same order, so that the
// capacities are identical to the CPU energy's (src/energy) and the CUDA energy's.
//
// WGSL has no bytes and no 64-bit integers: a pixel's colour is one word 0x00BBGGRR,
// masks and seeds come as bytes packed four to a word and are read as such, and the
// sums and products that need 64 bits are kept as (low, high) word pairs.
//
// The host prepends its constants as `const` declarations: the background model's
// (MEAN_BITS, GAIN_BITS, Z2_STEPS, STEADY_Z2, MAX_Z2, SHADOW_MIN, SHADOW_MAX,
// ADAPT_SHIFT, GAIN_HYSTERESIS), the workgroup size WG, the change tiles' side TILE, the words of `info`
// (INFO_MOVED, INFO_SUMS, INFO_SIGMA, INFO_TILES) and NO_SLOT.

struct Params {
    n: u32,
    width: u32,
    height: u32,
    dirs: u32,
    // per direction four bits: dx + 1 in the low two, dy + 1 in the high two
    offsets: u32,
    gate_threshold: u32,
    gate_on: u32,
    first: u32,
    has_prev: u32,
    z2_threshold: u32,
    has_seeds: u32,
    use_steady: u32,
    straight_off: u32,
    straight_len: u32,
    diagonal_off: u32,
    diagonal_len: u32,
    colour_off: u32,
    colour_bits: u32,
    has_colour: u32,
    bg_off: u32,
    bg_len: u32,
    has_bg: u32,
    ramp_off: u32,
    ramp_len: u32,
    full: i32,
    has_prior: u32,
    had_last: u32,
    absorb: u32,
    // tiles (TILE × TILE pixels) per row of tiles, tiles, and how many the packed
    // buffer holds
    tile_cols: u32,
    tiles: u32,
    pack_tiles: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    _pad3: u32,
    _pad4: u32,
}

// `info` holds the gate's count, six 64-bit gain sums, the σ sum, and the changed tiles
// packed.

const FAR_DISTANCE: u32 = 0x3fffffffu;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> info: array<atomic<u32>>;
// the camera's bytes as uploaded, four to a word
@group(0) @binding(2) var<storage, read> raw: array<u32>;
// the gated frame, one pixel a word
@group(0) @binding(3) var<storage, read_write> rgb: array<u32>;
@group(0) @binding(4) var<storage, read_write> held: array<u32>;
@group(0) @binding(5) var<storage, read_write> steady: array<u32>;
// the previous mask and the seeds (0 none, 1 foreground, 2 background), bytes
@group(0) @binding(6) var<storage, read> prev: array<u32>;
@group(0) @binding(7) var<storage, read> seeds: array<u32>;
// the background model: means (three a pixel), inverse variances, distances, still
// counts, last frame
@group(0) @binding(8) var<storage, read_write> mean: array<u32>;
@group(0) @binding(9) var<storage, read> inv_var: array<u32>;
@group(0) @binding(10) var<storage, read_write> z2: array<u32>;
@group(0) @binding(11) var<storage, read_write> still: array<u32>;
@group(0) @binding(12) var<storage, read_write> last: array<u32>;
// contrast, colour, background and ramp tables, at their offsets
@group(0) @binding(13) var<storage, read> tables: array<i32>;
// the capacities: `dirs` arrays of n edges, then source, then sink
@group(0) @binding(14) var<storage, read_write> caps: array<i32>;
@group(0) @binding(15) var<storage, read> dist_from: array<u32>;
@group(0) @binding(16) var<storage, read_write> dist_to: array<u32>;
// the capacities the host holds (the last ones brought back); per tile, three words:
// whether its capacities changed (bit 0 any, bit 1 an arc), and the rows and the
// columns of the tile where they did (a bit each: the box of the change); and where a
// changed tile is packed
@group(0) @binding(17) var<storage, read_write> kept: array<i32>;
@group(0) @binding(18) var<storage, read_write> tile_flags: array<atomic<u32>>;
@group(0) @binding(19) var<storage, read_write> slots: array<u32>;
@group(0) @binding(20) var<storage, read_write> packed: array<i32>;
// the background's per-channel gain (1/2^GAIN_BITS steps), decided on the device
@group(0) @binding(21) var<storage, read_write> gains: array<u32>;

var<workgroup> partial: array<vec2<u32>, WG>;

fn frame_byte(i: u32) -> u32 { return (raw[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu; }
fn prev_label(i: u32) -> u32 { return (prev[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu; }
fn seed_of(i: u32) -> u32 { return (seeds[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu; }
fn channel(colour: u32, c: u32) -> u32 { return (colour >> (8u * c)) & 0xffu; }
fn absdiff(a: u32, b: u32) -> u32 { return select(b - a, a - b, a > b); }
fn dir_dx(d: u32) -> i32 { return i32((p.offsets >> (4u * d)) & 3u) - 1; }
fn dir_dy(d: u32) -> i32 { return i32((p.offsets >> (4u * d + 2u)) & 3u) - 1; }
fn gain_of(c: u32) -> u32 { return gains[c]; }

// 64-bit unsigned arithmetic on (low, high) pairs.
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}
fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn le64(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x <= b.x); }
fn lt64(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }
// a · b for a 64-bit a, modulo 2^64
fn mul64(a: vec2<u32>, b: u32) -> vec2<u32> {
    let low = mul_wide(a.x, b);
    return vec2<u32>(low.x, low.y + a.y * b);
}
// a / d where the quotient fits a word (a.y < d): restoring division
fn div64(a: vec2<u32>, d: u32) -> u32 {
    var r = a.y;
    var lo = a.x;
    var q = 0u;
    for (var k = 0u; k < 32u; k++) {
        let top = r >> 31u;
        r = (r << 1u) | (lo >> 31u);
        lo = lo << 1u;
        q = q << 1u;
        if (top == 1u || r >= d) {
            r = r - d;
            q = q | 1u;
        }
    }
    return q;
}

// Adds a workgroup's 64-bit value to `info[word..word + 2]`, after a tree sum in
// workgroup memory (every invocation calls it; one atomic pair a workgroup).
fn add_to_info(word: u32, value: vec2<u32>, local: u32) {
    partial[local] = value;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (local < s) {
            partial[local] = add64(partial[local], partial[local + s]);
        }
        workgroupBarrier();
    }
    if (local == 0u) {
        let v = partial[0];
        if (v.x != 0u || v.y != 0u) {
            let old = atomicAdd(&info[word], v.x);
            atomicAdd(&info[word + 1u], v.y + select(0u, 1u, old + v.x < old));
        }
    }
    workgroupBarrier();
}

fn stride(groups: vec3<u32>) -> u32 { return groups.x * WG; }

// The camera's bytes into words, through the noise gate (where on): a pixel none of
// whose channels moved more than the threshold from the held colour keeps the held
// colour; one that moved replaces it. `first` holds the frame. Counts the pixels that
// moved, for the host's rule of whether σ may be held.
@compute @workgroup_size(WG)
fn en_gate(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    var moved = 0u;
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        let colour = frame_byte(3u * i) | (frame_byte(3u * i + 1u) << 8u) | (frame_byte(3u * i + 2u) << 16u);
        if (p.gate_on == 0u) {
            rgb[i] = colour;
            continue;
        }
        let h = held[i];
        var m = p.first != 0u;
        for (var c = 0u; c < 3u; c++) {
            m = m || absdiff(channel(colour, c), channel(h, c)) > p.gate_threshold;
        }
        if (m) {
            held[i] = colour;
            rgb[i] = colour;
            moved += 1u;
        } else {
            rgb[i] = h;
        }
    }
    if (moved != 0u) {
        atomicAdd(&info[INFO_MOVED], moved);
    }
}

// Sums of the squared colour differences of the neighbour pairs of the forward
// directions (East, South, then SouthEast, SouthWest for 8C), for the host's σ.
@compute @workgroup_size(WG)
fn en_sigma_sum(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) local: u32,
                @builtin(num_workgroups) groups: vec3<u32>) {
    var sum = vec2<u32>(0u, 0u);
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        let x = i32(i % p.width);
        let y = i32(i / p.width);
        var pixel = 0u;
        for (var d = 0u; d < p.dirs; d += 2u) {
            let qx = x + dir_dx(d);
            let qy = y + dir_dy(d);
            if (qx < 0 || qy < 0 || qx >= i32(p.width) || qy >= i32(p.height)) {
                continue;
            }
            let q = u32(qy) * p.width + u32(qx);
            for (var c = 0u; c < 3u; c++) {
                let diff = absdiff(channel(rgb[i], c), channel(rgb[q], c));
                pixel += diff * diff;
            }
        }
        sum = add64(sum, vec2<u32>(pixel, 0u));
    }
    add_to_info(INFO_SIGMA, sum, local);
}

// Sums of the seen and expected colours over the pixels that look like background
// (not foreground in the previous mask, last distance at most `z2_threshold`), for the
// host's per-channel gain: sums 0..3 seen, 3..6 expected.
@compute @workgroup_size(WG)
fn en_gain_sums(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) local: u32,
                @builtin(num_workgroups) groups: vec3<u32>) {
    var sums: array<vec2<u32>, 6>;
    for (var k = 0u; k < 6u; k++) {
        sums[k] = vec2<u32>(0u, 0u);
    }
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        if ((p.has_prev != 0u && prev_label(i) != 0u) || z2[i] > p.z2_threshold) {
            continue;
        }
        for (var c = 0u; c < 3u; c++) {
            sums[c] = add64(sums[c], vec2<u32>(channel(rgb[i], c) << MEAN_BITS, 0u));
            sums[3u + c] = add64(sums[3u + c], vec2<u32>(mean[3u * i + c], 0u));
        }
    }
    for (var k = 0u; k < 6u; k++) {
        add_to_info(INFO_SUMS + 2u * k, sums[k], local);
    }
}

// The frame's gain from the sums (one invocation), as the host's
// `BackgroundModel::apply_gain_sums`: per channel (seen << GAIN_BITS) / expected, at
// most four times unity, taken where it moved more than GAIN_HYSTERESIS; a channel
// with nothing expected keeps its gain.
@compute @workgroup_size(1)
fn en_gain() {
    for (var c = 0u; c < 3u; c++) {
        let at = INFO_SUMS + 2u * c;
        let seen = vec2<u32>(atomicLoad(&info[at]), atomicLoad(&info[at + 1u]));
        let expected = vec2<u32>(atomicLoad(&info[at + 6u]), atomicLoad(&info[at + 7u]));
        if (expected.x == 0u && expected.y == 0u) {
            continue;
        }
        let scaled = vec2<u32>(seen.x << GAIN_BITS, (seen.y << GAIN_BITS) | (seen.x >> (32u - GAIN_BITS)));
        // the largest q up to the cap with q · expected ≤ scaled: the capped quotient
        var low = 0u;
        var high = 4u << GAIN_BITS;
        while (low < high) {
            let mid = (low + high + 1u) / 2u;
            if (le64(mul64(expected, mid), scaled)) {
                low = mid;
            } else {
                high = mid - 1u;
            }
        }
        if (absdiff(low, gains[c]) > GAIN_HYSTERESIS) {
            gains[c] = low;
        }
    }
}

// Squared colour distance of a pixel from the background in 1/Z2_STEPS steps of its
// noise variance; a darker or lighter pixel of the background's chromaticity (a
// shadow) counts by its distance from the background's colour line only.
fn quantised_z2(seen: vec3<u32>, expected: vec3<u32>, inv: u32) -> u32 {
    var sb = vec2<u32>(0u, 0u);
    var bb = vec2<u32>(0u, 0u);
    var full = vec2<u32>(0u, 0u);
    var cc = vec2<u32>(0u, 0u);
    for (var c = 0u; c < 3u; c++) {
        sb = add64(sb, mul_wide(seen[c], expected[c]));
        bb = add64(bb, mul_wide(expected[c], expected[c]));
        let d = absdiff(seen[c], expected[c]);
        full = add64(full, mul_wide(d, d));
        cc = add64(cc, mul_wide(seen[c], seen[c]));
    }
    var dist = full;
    let scaled = vec2<u32>(sb.x << GAIN_BITS, (sb.y << GAIN_BITS) | (sb.x >> (32u - GAIN_BITS)));
    if ((bb.x != 0u || bb.y != 0u) && le64(mul64(bb, SHADOW_MIN), scaled) && le64(scaled, mul64(bb, SHADOW_MAX))) {
        // within the band |b| is at most 1.2 |seen|, so seen·b, bb and cc fit a word,
        // and so does the quotient (at most cc)
        let line = div64(mul_wide(sb.x, sb.x), bb.x);
        let off = select(0u, cc.x - line, cc.x > line);
        if (lt64(vec2<u32>(off, 0u), dist)) {
            dist = vec2<u32>(off, 0u);
        }
    }
    // (dist · inv) >> 32, from the 96-bit product
    let low = mul_wide(dist.x, inv);
    let high = mul_wide(dist.y, inv);
    let q = add64(vec2<u32>(low.y, 0u), high);
    let cap = MAX_Z2 * Z2_STEPS;
    return select(min(q.x, cap), cap, q.y != 0u);
}

// Background distance of every pixel under the frame's gain (z2, 0 where the pixel is
// within the steady band), and the frame with such pixels in the background's colours.
@compute @workgroup_size(WG)
fn en_observe(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let unit_half = 1u << (GAIN_BITS - 1u);
    let half = 1u << (MEAN_BITS + GAIN_BITS - 1u);
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        var expected: vec3<u32>;
        var seen: vec3<u32>;
        let colour = rgb[i];
        for (var c = 0u; c < 3u; c++) {
            expected[c] = (mean[3u * i + c] * gain_of(c) + unit_half) >> GAIN_BITS;
            seen[c] = channel(colour, c) << MEAN_BITS;
        }
        var q = quantised_z2(seen, expected, inv_var[i]);
        if (q < STEADY_Z2 * Z2_STEPS) {
            q = 0u;
        }
        z2[i] = q;
        var out = colour;
        if (q == 0u) {
            out = 0u;
            for (var c = 0u; c < 3u; c++) {
                let v = min((mean[3u * i + c] * gain_of(c) + half) >> (MEAN_BITS + GAIN_BITS), 255u);
                out = out | (v << (8u * c));
            }
        }
        steady[i] = out;
    }
}

// Contrast-sensitive weights of every arc, both directions of a pair alike: the table
// of the arc's length class at the squared colour difference, 0 past its end, and 0
// between two seeded pixels. Of the steady frame (`use_steady`) or the gated one.
@compute @workgroup_size(WG)
fn en_edges(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        let x = i32(i % p.width);
        let y = i32(i / p.width);
        let fixed = p.has_seeds != 0u && seed_of(i) != 0u;
        let here = select(rgb[i], steady[i], p.use_steady != 0u);
        for (var d = 0u; d < p.dirs; d++) {
            let dx = dir_dx(d);
            let dy = dir_dy(d);
            let qx = x + dx;
            let qy = y + dy;
            var v = 0;
            if (qx >= 0 && qy >= 0 && qx < i32(p.width) && qy < i32(p.height)) {
                let q = u32(qy) * p.width + u32(qx);
                let there = select(rgb[q], steady[q], p.use_steady != 0u);
                var d2 = 0u;
                for (var c = 0u; c < 3u; c++) {
                    let diff = absdiff(channel(here, c), channel(there, c));
                    d2 += diff * diff;
                }
                let diagonal = dx != 0 && dy != 0;
                let len = select(p.straight_len, p.diagonal_len, diagonal);
                let off = select(p.straight_off, p.diagonal_off, diagonal);
                if (d2 < len) {
                    v = tables[off + d2];
                }
                if (fixed && seed_of(q) != 0u) {
                    v = 0;
                }
            }
            caps[d * p.n + i] = v;
        }
    }
}

// Distance 0 on the previous mask's boundary (a 4-neighbour of the other label), far
// elsewhere: where the chamfer relaxation starts.
@compute @workgroup_size(WG)
fn en_boundary(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        let x = i % p.width;
        let y = i / p.width;
        let v = prev_label(i) != 0u;
        var differs = false;
        if (x > 0u) { differs = differs || (prev_label(i - 1u) != 0u) != v; }
        if (x + 1u < p.width) { differs = differs || (prev_label(i + 1u) != 0u) != v; }
        if (y > 0u) { differs = differs || (prev_label(i - p.width) != 0u) != v; }
        if (y + 1u < p.height) { differs = differs || (prev_label(i + p.width) != 0u) != v; }
        dist_to[i] = select(FAR_DISTANCE, 0u, differs);
    }
}

// One round of the chamfer (3-4) relaxation: each round fixes the distances one more
// arc away from the boundary, so `rounds` rounds make them exact below 3 · rounds,
// which is all the temporal prior reads (larger ones come out no smaller than true).
@compute @workgroup_size(WG)
fn en_relax(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        let x = i32(i % p.width);
        let y = i32(i / p.width);
        var best = dist_from[i];
        for (var dy = -1; dy <= 1; dy++) {
            for (var dx = -1; dx <= 1; dx++) {
                let qx = x + dx;
                let qy = y + dy;
                if ((dx == 0 && dy == 0) || qx < 0 || qy < 0 || qx >= i32(p.width) || qy >= i32(p.height)) {
                    continue;
                }
                let v = dist_from[u32(qy) * p.width + u32(qx)] + select(3u, 4u, dx != 0 && dy != 0);
                best = min(best, v);
            }
        }
        dist_to[i] = best;
    }
}

// Terminal capacities: the colour models' capacity of the pixel's colour cell, the
// background cost of its distance, the temporal prior (towards the previous label,
// ramped near its boundary), folded into one terminal; a seeded pixel gets 1 + its
// arcs' sum towards its seed's terminal. (The CPU engine that cuts these needs no
// census of the terminals, which the CUDA kernel takes for its engine's schedule.)
@compute @workgroup_size(WG)
fn en_terminals(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        var data = 0;
        if (p.has_colour != 0u) {
            let s = 8u - p.colour_bits;
            let colour = rgb[i];
            let cell = ((channel(colour, 0u) >> s) << (2u * p.colour_bits)) | ((channel(colour, 1u) >> s) << p.colour_bits)
                | (channel(colour, 2u) >> s);
            data += tables[p.colour_off + cell];
        }
        if (p.has_bg != 0u) {
            data += tables[p.bg_off + min(z2[i], max(p.bg_len, 1u) - 1u)];
        }
        if (p.has_prior != 0u) {
            let d = dist_from[i];
            let cost = select(p.full, tables[p.ramp_off + min(d, max(p.ramp_len, 1u) - 1u)], d < p.ramp_len);
            data += select(-cost, cost, prev_label(i) != 0u);
        }
        var s = max(data, 0);
        var t = max(-data, 0);
        let seed = select(0u, seed_of(i), p.has_seeds != 0u);
        if (seed != 0u) {
            var hard = 1;
            for (var d = 0u; d < p.dirs; d++) {
                hard += caps[d * p.n + i];
            }
            s = select(0, hard, seed == 1u);
            t = select(hard, 0, seed == 1u);
        }
        caps[p.dirs * p.n + i] = s;
        caps[(p.dirs + 1u) * p.n + i] = t;
    }
}

// The background's slow adaptation after the cut: background pixels a little off the
// model step its mean towards them; a foreground pixel whose colour has not changed
// for `absorb` frames becomes background at once. `last` keeps this frame's colours.
// The cut is in `prev` (it becomes the next frame's previous mask).
@compute @workgroup_size(WG)
fn en_adapt(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        let colour = rgb[i];
        var goal: vec3<u32>;
        for (var c = 0u; c < 3u; c++) {
            let g = max(gain_of(c), 1u);
            goal[c] = ((channel(colour, c) << (MEAN_BITS + GAIN_BITS)) + g / 2u) / g;
        }
        if (prev_label(i) == 0u) {
            still[i] = 0u;
            let q = z2[i];
            if (q >= 1u && q <= p.z2_threshold) {
                for (var c = 0u; c < 3u; c++) {
                    let m = mean[3u * i + c];
                    let gap = absdiff(m, goal[c]);
                    let move_by = max(gap >> ADAPT_SHIFT, min(gap, 1u));
                    mean[3u * i + c] = select(m - move_by, m + move_by, goal[c] > m);
                }
            }
        } else {
            let stayed = p.had_last != 0u && last[i] == colour;
            var count = select(0u, still[i] + 1u, stayed);
            if (count >= p.absorb) {
                for (var c = 0u; c < 3u; c++) {
                    mean[3u * i + c] = goal[c];
                }
                count = 0u;
            }
            still[i] = count;
        }
        last[i] = colour;
    }
}

fn tile_of(i: u32) -> u32 { return (i / p.width / TILE) * p.tile_cols + (i % p.width) / TILE; }

// Where the capacities differ from those the host holds: each such pixel's tile is
// flagged (an arc's change too) with its row and column, and its capacities become the
// kept ones, so that only changed tiles come back and the CPU engine re-reads only the
// boxes of the pixels that changed.
@compute @workgroup_size(WG)
fn en_compare(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        var flags = 0u;
        for (var a = 0u; a < p.dirs + 2u; a++) {
            let v = caps[a * p.n + i];
            if (v != kept[a * p.n + i]) {
                kept[a * p.n + i] = v;
                flags = flags | select(1u, 3u, a < p.dirs);
            }
        }
        if (flags != 0u) {
            let t = 3u * tile_of(i);
            atomicOr(&tile_flags[t], flags);
            atomicOr(&tile_flags[t + 1u], 1u << ((i / p.width) % TILE));
            atomicOr(&tile_flags[t + 2u], 1u << ((i % p.width) % TILE));
        }
    }
}

// A slot for each changed tile, in the order they are claimed (the host reads the
// slots back with the packed tiles), NO_SLOT for the others.
@compute @workgroup_size(WG)
fn en_slots(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var t = gid.x; t < p.tiles; t += stride(groups)) {
        var slot = NO_SLOT;
        if (atomicLoad(&tile_flags[3u * t]) != 0u) {
            slot = atomicAdd(&info[INFO_TILES], 1u);
        }
        slots[t] = slot;
    }
}

// The capacities of the changed tiles, one after another in slot order: per tile its
// arrays in turn (arcs, source, sink), each TILE × TILE values row by row (tiles past
// the packed buffer's room are left out: the host then reads every capacity).
@compute @workgroup_size(WG)
fn en_pack(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var i = gid.x; i < p.n; i += stride(groups)) {
        let slot = slots[tile_of(i)];
        if (slot == NO_SLOT || slot >= p.pack_tiles) {
            continue;
        }
        let local = ((i / p.width) % TILE) * TILE + (i % p.width) % TILE;
        let arrays = p.dirs + 2u;
        for (var a = 0u; a < arrays; a++) {
            packed[(slot * arrays + a) * TILE * TILE + local] = caps[a * p.n + i];
        }
    }
}
