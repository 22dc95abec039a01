// The composite in wgpu compute shaders, for every GPU (Vulkan, Metal, DirectX 12): the
// port of `src/composite` (the soft alpha's guided filter, the blur, the backdrops and
// the mix), with its integer arithmetic, so that the picture is byte for byte the CPU
// composite's.
//
// WGSL has no bytes: the frame comes as its RGB bytes packed into words, the mask as
// bytes four to a word, and the picture leaves as one word a pixel, 0xAABBGGRR (the
// bytes of an Rgba8Unorm texel), in rows of `stride` words. Integer sums do not depend
// on their order, so the whole-frame filter here, in separable passes, gives the bytes
// of the CPU's filter by tiles.
//
// The host prepends its constants as `const` declarations: the workgroup size WG, the
// filter's RADIUS, EPSILON and COEF_BITS, the blur's MEAN_BITS and WEIGHT_BITS, the
// checkerboard's CHECKER and the kinds of picture (KIND_CHECKER, KIND_COLOUR,
// KIND_IMAGE, KIND_BLUR, KIND_ALPHA).

struct Params {
    width: u32,
    height: u32,
    n: u32,
    // words per row of the picture
    stride: u32,
    kind: u32,
    // the backdrop's colour, 0x00BBGGRR
    colour: u32,
    image_width: u32,
    image_height: u32,
    // the blur's small copy and its cells' side
    small_width: u32,
    small_height: u32,
    factor: u32,
    // 1 where the mask is the frame's size and filtered; 0: the frame as it is
    filtered: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// the frame's RGB bytes and the mask's bytes, packed into words
@group(0) @binding(1) var<storage, read> frame: array<u32>;
@group(0) @binding(2) var<storage, read> mask: array<u32>;
// per pixel 0xMMBBGGRR: the colour and the mask's byte
@group(0) @binding(3) var<storage, read_write> px: array<u32>;
// per pixel: the sums of p, I, I², I·p over the row's RADIUS window and of p over its
// 2·RADIUS window
@group(0) @binding(4) var<storage, read_write> sums: array<u32>;
// per pixel: the window's coefficients (a, b), then their sums over the row's window
@group(0) @binding(5) var<storage, read_write> coef: array<i32>;
@group(0) @binding(6) var<storage, read_write> coef_rows: array<i32>;
// the blur's small copy: the cells' means, then smoothed (RGB per cell)
@group(0) @binding(7) var<storage, read_write> means: array<u32>;
@group(0) @binding(8) var<storage, read_write> small: array<u32>;
// the backdrop picture, 0x00BBGGRR a pixel
@group(0) @binding(9) var<storage, read> image: array<u32>;
@group(0) @binding(10) var<storage, read_write> picture: array<u32>;

const SUM_WORDS: u32 = 5u;

// What an invocation adds to its item for its next: the invocations dispatched.
fn stride_of(groups: vec3<u32>) -> u32 {
    return groups.x * WG;
}

fn frame_byte(j: u32) -> u32 {
    return (frame[j >> 2u] >> ((j & 3u) * 8u)) & 0xffu;
}

fn channel(c: u32, k: u32) -> u32 {
    return (c >> (8u * k)) & 0xffu;
}

// Grey level of a pixel (BT.601 weights), as `alpha::luma`.
fn luma(c: u32) -> u32 {
    return (channel(c, 0u) * 77u + channel(c, 1u) * 150u + channel(c, 2u) * 29u) >> 8u;
}

fn fg(c: u32) -> u32 {
    return select(0u, 1u, (c >> 24u) != 0u);
}

// The range [lo, hi) of a window of radius r around i on an axis of n.
fn span(i: u32, r: u32, n: u32) -> vec2<u32> {
    return vec2<u32>(select(0u, i - r, i >= r), min(i + r + 1u, n));
}

// The frame's colour and the mask's byte of every pixel (255: no filter, opaque).
@compute @workgroup_size(WG)
fn cp_unpack(@builtin(global_invocation_id) gid: vec3<u32>,
             @builtin(num_workgroups) groups: vec3<u32>) {
    for (var i = gid.x; i < params.n; i += stride_of(groups)) {
        let rgb = frame_byte(3u * i) | (frame_byte(3u * i + 1u) << 8u)
            | (frame_byte(3u * i + 2u) << 16u);
        var m = 255u;
        if (params.filtered != 0u) {
            m = (mask[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
        }
        px[i] = rgb | (m << 24u);
    }
}

// The row sums of each pixel's windows.
@compute @workgroup_size(WG)
fn cp_rows(@builtin(global_invocation_id) gid: vec3<u32>,
           @builtin(num_workgroups) groups: vec3<u32>) {
    let w = params.width;
    for (var i = gid.x; i < params.n; i += stride_of(groups)) {
        let x = i % w;
        let row = i - x;
        let near = span(x, RADIUS, w);
        var p = 0u;
        var si = 0u;
        var sii = 0u;
        var sip = 0u;
        for (var xx = near.x; xx < near.y; xx++) {
            let c = px[row + xx];
            let g = luma(c);
            let f = fg(c);
            p += f;
            si += g;
            sii += g * g;
            sip += g * f;
        }
        let far = span(x, 2u * RADIUS, w);
        var p2 = 0u;
        for (var xx = far.x; xx < far.y; xx++) {
            p2 += fg(px[row + xx]);
        }
        let s = SUM_WORDS * i;
        sums[s] = p;
        sums[s + 1u] = si;
        sums[s + 2u] = sii;
        sums[s + 3u] = sip;
        sums[s + 4u] = p2;
    }
}

// num · 2^COEF_BITS / den rounded half up, for num < den < 2^30: long division two
// bits at a time, the quotient of `alpha::fraction`.
fn fraction(num: u32, den: u32) -> u32 {
    var q = 0u;
    var r = num;
    for (var bit = 0u; bit < COEF_BITS; bit += 2u) {
        r = r << 2u;
        q = (q << 2u) | (r / den);
        r = r % den;
    }
    return q + select(0u, 1u, 2u * r >= den);
}

// x / n rounded half away from zero, as `alpha::div_round`.
fn div_round(x: i32, n: u32) -> i32 {
    let q = i32((u32(abs(x)) + n / 2u) / n);
    return select(q, -q, x < 0);
}

// Each window's linear model p ≈ a·I + b in fixed point, as `alpha::coefficients`.
@compute @workgroup_size(WG)
fn cp_coef(@builtin(global_invocation_id) gid: vec3<u32>,
           @builtin(num_workgroups) groups: vec3<u32>) {
    let w = params.width;
    for (var i = gid.x; i < params.n; i += stride_of(groups)) {
        let x = i % w;
        let y = i / w;
        let ys = span(y, RADIUS, params.height);
        let xs = span(x, RADIUS, w);
        let n = (ys.y - ys.x) * (xs.y - xs.x);
        var p = 0u;
        var si = 0u;
        var sii = 0u;
        var sip = 0u;
        for (var yy = ys.x; yy < ys.y; yy++) {
            let s = SUM_WORDS * (yy * w + x);
            p += sums[s];
            si += sums[s + 1u];
            sii += sums[s + 2u];
            sip += sums[s + 3u];
        }
        var a = 0;
        var b = select(0, i32(1u << COEF_BITS), p != 0u);
        if (p != 0u && p != n) {
            let variance = n * sii - si * si;
            let cov = i32(n * sip) - i32(si * p);
            let scaled = i32(fraction(u32(abs(cov)), variance + n * n * EPSILON));
            a = select(scaled, -scaled, cov < 0);
            b = div_round(i32(p << COEF_BITS) - a * i32(si), n);
        }
        coef[2u * i] = a;
        coef[2u * i + 1u] = b;
    }
}

// The row sums of the coefficients over each pixel's window.
@compute @workgroup_size(WG)
fn cp_coef_rows(@builtin(global_invocation_id) gid: vec3<u32>,
                @builtin(num_workgroups) groups: vec3<u32>) {
    let w = params.width;
    for (var i = gid.x; i < params.n; i += stride_of(groups)) {
        let x = i % w;
        let row = i - x;
        let xs = span(x, RADIUS, w);
        var sa = 0;
        var sb = 0;
        for (var xx = xs.x; xx < xs.y; xx++) {
            sa += coef[2u * (row + xx)];
            sb += coef[2u * (row + xx) + 1u];
        }
        coef_rows[2u * i] = sa;
        coef_rows[2u * i + 1u] = sb;
    }
}

// The alpha of pixel (x, y): the mask's byte away from the cut, the filter's near it.
fn alpha_at(x: u32, y: u32, c: u32) -> u32 {
    if (params.filtered == 0u) {
        return 255u;
    }
    let w = params.width;
    let far = span(y, 2u * RADIUS, params.height);
    let xs_far = span(x, 2u * RADIUS, w);
    var p2 = 0u;
    for (var yy = far.x; yy < far.y; yy++) {
        p2 += sums[SUM_WORDS * (yy * w + x) + 4u];
    }
    if (p2 == 0u || p2 == (far.y - far.x) * (xs_far.y - xs_far.x)) {
        return c >> 24u;
    }
    let ys = span(y, RADIUS, params.height);
    let xs = span(x, RADIUS, w);
    let m = (ys.y - ys.x) * (xs.y - xs.x);
    var sa = 0;
    var sb = 0;
    for (var yy = ys.x; yy < ys.y; yy++) {
        sa += coef_rows[2u * (yy * w + x)];
        sb += coef_rows[2u * (yy * w + x) + 1u];
    }
    // as `alpha::blend_alpha`: i32 arithmetic wraps
    let v = u32(clamp(sa * i32(luma(c)) + sb, 0, i32(m << COEF_BITS)));
    let mean = (v + m / 2u) / m;
    return (mean * 255u + (1u << (COEF_BITS - 1u))) >> COEF_BITS;
}

// The box means of the blur's cells, in fixed point, as `blur::cell_means`.
@compute @workgroup_size(WG)
fn cp_cells(@builtin(global_invocation_id) gid: vec3<u32>,
            @builtin(num_workgroups) groups: vec3<u32>) {
    let f = params.factor;
    let cells = params.small_width * params.small_height;
    for (var j = gid.x; j < cells; j += stride_of(groups)) {
        let cx = j % params.small_width;
        let cy = j / params.small_width;
        let x1 = min((cx + 1u) * f, params.width);
        let y1 = min((cy + 1u) * f, params.height);
        var acc = vec3<u32>(0u);
        var n = 0u;
        for (var y = cy * f; y < y1; y++) {
            for (var x = cx * f; x < x1; x++) {
                let c = px[y * params.width + x];
                acc += vec3<u32>(channel(c, 0u), channel(c, 1u), channel(c, 2u));
                n += 1u;
            }
        }
        n = max(n, 1u);
        for (var k = 0u; k < 3u; k++) {
            means[3u * j + k] = ((acc[k] << MEAN_BITS) + n / 2u) / n;
        }
    }
}

// One 3×3 box pass over the small copy (clamped at the borders), as `Blur::smooth`.
@compute @workgroup_size(WG)
fn cp_smooth(@builtin(global_invocation_id) gid: vec3<u32>,
             @builtin(num_workgroups) groups: vec3<u32>) {
    let sw = i32(params.small_width);
    let sh = i32(params.small_height);
    for (var j = gid.x; j < u32(sw * sh); j += stride_of(groups)) {
        let x = i32(j) % sw;
        let y = i32(j) / sw;
        var acc = vec3<u32>(0u);
        for (var dy = -1; dy <= 1; dy++) {
            for (var dx = -1; dx <= 1; dx++) {
                let s = u32(clamp(y + dy, 0, sh - 1) * sw + clamp(x + dx, 0, sw - 1));
                acc += vec3<u32>(means[3u * s], means[3u * s + 1u], means[3u * s + 2u]);
            }
        }
        for (var k = 0u; k < 3u; k++) {
            small[3u * j + k] = (acc[k] + 4u) / 9u;
        }
    }
}

// The two samples of the small copy (of n) that position i lies between and the
// weight of the second, as `blur::tap`.
fn tap(i: u32, n: u32) -> vec3<u32> {
    let f = params.factor;
    let steps = select(0u, 2u * i + 1u - f, 2u * i + 1u >= f);
    let i0 = steps / (2u * f);
    if (i0 >= n - 1u) {
        return vec3<u32>(n - 1u, n - 1u, 0u);
    }
    return vec3<u32>(i0, i0 + 1u, (((steps % (2u * f)) << WEIGHT_BITS) + f) / (2u * f));
}

// The blur at (x, y), as `Blur::upsample`.
fn blurred(x: u32, y: u32) -> vec3<u32> {
    let tx = tap(x, params.small_width);
    let ty = tap(y, params.small_height);
    let one = 1u << WEIGHT_BITS;
    let shift = MEAN_BITS + 2u * WEIGHT_BITS;
    let r0 = 3u * ty.x * params.small_width;
    let r1 = 3u * ty.y * params.small_width;
    var out = vec3<u32>(0u);
    for (var k = 0u; k < 3u; k++) {
        let top = small[r0 + 3u * tx.x + k] * (one - tx.z) + small[r0 + 3u * tx.y + k] * tx.z;
        let bottom = small[r1 + 3u * tx.x + k] * (one - tx.z)
            + small[r1 + 3u * tx.y + k] * tx.z;
        out[k] = (top * (one - ty.z) + bottom * ty.z + (1u << (shift - 1u))) >> shift;
    }
    return out;
}

// The backdrop picture's pixel for (x, y), stretched: x · image_width / width without
// overflow (x · (image_width mod width) < width²).
fn image_at(x: u32, y: u32) -> u32 {
    let iw = params.image_width;
    let ih = params.image_height;
    let w = params.width;
    let h = params.height;
    let sx = x * (iw / w) + x * (iw % w) / w;
    let sy = y * (ih / h) + y * (ih % h) / h;
    return image[min(sy, ih - 1u) * iw + min(sx, iw - 1u)];
}

// What lies behind pixel (x, y), 0x00BBGGRR.
fn behind(x: u32, y: u32) -> u32 {
    switch params.kind {
        case KIND_COLOUR: {
            return params.colour;
        }
        case KIND_IMAGE: {
            return image_at(x, y);
        }
        case KIND_BLUR: {
            let b = blurred(x, y);
            return b.x | (b.y << 8u) | (b.z << 16u);
        }
        default: {
            let grey = select(153u, 204u, ((x / CHECKER + y / CHECKER) & 1u) == 0u);
            return grey * 0x010101u;
        }
    }
}

// The picture: the frame over what lies behind by the soft alpha (opaque), or the
// frame with the soft alpha (KIND_ALPHA).
@compute @workgroup_size(WG)
fn cp_compose(@builtin(global_invocation_id) gid: vec3<u32>,
              @builtin(num_workgroups) groups: vec3<u32>) {
    let w = params.width;
    for (var i = gid.x; i < params.n; i += stride_of(groups)) {
        let x = i % w;
        let y = i / w;
        let c = px[i];
        let rgb = c & 0xffffffu;
        let a = alpha_at(x, y, c);
        var out = rgb | (a << 24u);
        if (params.kind != KIND_ALPHA) {
            out = rgb | 0xff000000u;
        }
        if (params.kind != KIND_ALPHA && a != 255u) {
            let b = behind(x, y);
            out = 0xff000000u;
            for (var k = 0u; k < 3u; k++) {
                let mixed = (channel(c, k) * a + channel(b, k) * (255u - a) + 127u) / 255u;
                out |= mixed << (8u * k);
            }
        }
        picture[y * params.stride + x] = out;
    }
}
