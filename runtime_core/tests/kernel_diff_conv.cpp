// kernel_diff_test: channels-last convolutions and pooling, int8 convolutions (the harness: kernel_diff.h).
#include "kernel_diff.h"

namespace kdiff {

// pocket::conv2d_packed: channels-last x, weights packed as custom_ops.pack_conv_weight does
// (groups 1: (blocks, kh, kw, c_in, 16); depthwise: (kh, kw, c)), bias, residual and bounds;
// the magnitude bound is the unclamped portable kernel on absolute values.
std::vector<float> pack_conv_f32(const std::vector<float>& w, const ConvCase& c) {
  if (c.groups > 1) {
    std::vector<float> out(c.c_out * c.k * c.k);
    for (int64_t o = 0; o < c.c_out; ++o)
      for (int64_t t = 0; t < c.k * c.k; ++t) out[t * c.c_out + o] = w[o * c.k * c.k + t];
    return out;
  }
  const int64_t blocks = (c.c_out + 15) / 16, taps = c.k * c.k;
  std::vector<float> out(blocks * taps * c.c_in * 16, 0.0f);
  for (int64_t o = 0; o < c.c_out; ++o)
    for (int64_t i = 0; i < c.c_in; ++i)
      for (int64_t t = 0; t < taps; ++t)
        out[((o / 16 * taps + t) * c.c_in + i) * 16 + o % 16] = w[(o * c.c_in + i) * taps + t];
  return out;
}

// The .act overloads' activations, one per case in turn. The optimized kernels apply them to
// the sums they have just stored: within the bound of the plain op's result (tol · (|y| + mag))
// times the activations' steepest slope (1.5: hardswish at 3), plus the activation's own few
// ulp, which tol · |result| covers. So their magnitude bound is 3 · mag.
const char* const kConvActivations[] = {"silu", "sigmoid", "hardswish", "hardsigmoid"};
constexpr float kActivationMag = 3.0f;

// act: test pocket::conv2d_packed.act (portable is that op's; plain is conv2d_packed's).
void conv2d_packed_cases(KernelFn portable, KernelFn plain, KernelFn fast, const char* set, bool act) {
  const std::vector<ConvCase> cases = {
      {1, 3, 21, 9, 7, 3, 2, 1, 1},   {2, 17, 40, 5, 6, 1, 1, 0, 1},  {1, 5, 16, 13, 13, 5, 3, 2, 1, 2},
      {1, 8, 33, 11, 9, 1, 2, 0, 1},  {1, 3, 2, 3, 5, 3, 1, 3, 1},    {1, 3, 16, 23, 19, 7, 2, 3, 1},
      {2, 6, 6, 7, 7, 3, 1, 1, 6},    {1, 19, 19, 12, 13, 3, 1, 1, 19}, {1, 72, 72, 9, 10, 3, 2, 1, 72},
      {1, 5, 5, 9, 9, 5, 1, 2, 5, 2}, {1, 40, 40, 3, 17, 3, 1, 4, 40},
      {2, 64, 48, 5, 6, 3, 1, 1, 1},  // weights past L1: channel group first, over two batch items
      // depthwise 3x3 rows long enough for the runs that load each input pixel once (8
      // pixels at stride 1, 6 at stride 2), with channel groups, single vectors and a tail
      {1, 72, 72, 9, 30, 3, 2, 1, 72}, {1, 56, 56, 5, 40, 3, 1, 1, 56},
      // and rows of every other run: 7 wide (runs of 4 and 2 that read the padding, a last
      // pixel alone), 14 (a run of 8 inside), padding 2 (two pixels alone at the left), stride
      // 2 with padding 3 (a run of 2 ending in the padding), 3 wide (a run of 2 on both edges)
      {1, 100, 100, 4, 7, 3, 1, 1, 100}, {1, 24, 24, 3, 14, 3, 1, 2, 24}, {1, 40, 40, 5, 23, 3, 2, 1, 40},
      {1, 17, 17, 4, 15, 3, 2, 3, 17}, {2, 9, 9, 6, 3, 3, 1, 1, 9},
      // output channels in groups of 3, 2 and 1 blocks (3 + 2, 3 + 3 + 1, 3 + 1), 1x1 and 3x3
      {1, 12, 72, 7, 9, 1, 1, 0, 1},  {2, 9, 100, 5, 5, 1, 1, 0, 1},  {1, 20, 64, 6, 7, 3, 1, 1, 1},
      {1, 160, 97, 7, 7, 1, 1, 0, 1},
      // AVX-512 runs a tile's 2-3 blocks together: a third block of 1 channel (3x3); a second
      // block that is partial
      {1, 6, 33, 9, 8, 3, 1, 1, 1},  {1, 50, 20, 7, 7, 1, 1, 0, 1},
      // calls of up to 8 position tiles: position first over chunks of 8 tiles (a last one of
      // 2) and two channel groups, the 2-thread split inside a chunk of the second batch item;
      // channel group first over planes of 13 tiles
      {3, 4, 70, 11, 13, 1, 1, 0, 1},  {2, 40, 100, 9, 10, 3, 1, 1, 1},
  };
  const double bounds[4][2] = {{-INFINITY, INFINITY}, {0.0, INFINITY}, {0.0, 6.0}, {-0.5, 0.25}};
  int i = 0;
  for (const ConvCase& c : cases) {
    const int64_t span = c.dil * (c.k - 1) + 1;
    const int64_t oh = (c.h + 2 * c.pad - span) / c.stride + 1, ow = (c.w + 2 * c.pad - span) / c.stride + 1;
    const int64_t out_n = c.batch * oh * ow * c.c_out;
    auto x = random_floats(c.batch * c.h * c.w * c.c_in, 3.0f), b = random_floats(c.c_out);
    auto w = pack_conv_f32(random_floats(c.c_out * (c.c_in / c.groups) * c.k * c.k), c);
    auto r = random_floats(out_n);
    const double* bound = bounds[i % 4];
    const bool bias = i % 3 != 0, residual = i % 2 == 1;
    const char* activation = act ? kConvActivations[i % 4] : nullptr;
    ++i;
    char what[200];
    std::snprintf(what, sizeof what,
                  "[%s] pocket::conv2d_packed%s%s x[%lld,%lld,%lld,%lld] k%lld s%lld p%lld d%lld g%lld", set,
                  act ? ".act " : "", act ? activation : "", (long long)c.batch, (long long)c.h, (long long)c.w,
                  (long long)c.c_in, (long long)c.k, (long long)c.stride, (long long)c.pad, (long long)c.dil,
                  (long long)c.groups);
    // with_act: the .act overload's arguments (else the plain op's, for the bound)
    auto args = [&](Args& a, bool absolute, bool clamp, bool with_act) {
      a.ptrs = {a.floats({c.batch, c.h, c.w, c.c_in}, absolute ? abs_of(x) : x),
                c.groups > 1 ? a.floats({c.k, c.k, c.c_out}, absolute ? abs_of(w) : w)
                             : a.floats({(c.c_out + 15) / 16, c.k, c.k, c.c_in, 16}, absolute ? abs_of(w) : w),
                bias ? a.floats({c.c_out}, absolute ? abs_of(b) : b) : a.none(),
                residual ? a.floats({c.batch, oh, ow, c.c_out}, absolute ? abs_of(r) : r) : a.none(),
                a.integer(c.c_out), a.ints({c.stride, c.stride}), a.ints({c.pad, c.pad}), a.ints({c.dil, c.dil}),
                a.integer(c.groups), clamp && !std::isinf(bound[0]) ? a.real(bound[0]) : a.none(),
                clamp && !std::isinf(bound[1]) ? a.real(bound[1]) : a.none()};
      if (with_act) a.ptrs.push_back(a.text(activation));
      a.ptrs.push_back(a.output(out_n));
    };
    const std::vector<float> want = run(portable, [&](Args& a) { args(a, false, true, act); }, 1, what);
    std::vector<float> mag = run(plain, [&](Args& a) { args(a, true, false, false); }, 1, what);
    if (act)
      for (float& m : mag) m *= kActivationMag;
    compare_threads(what, fast, [&](Args& a) { args(a, false, true, act); }, want, mag, kFloatTol);
  }
}

void test_conv2d_packed(KernelFn portable, KernelFn fast, const char* set) {
  conv2d_packed_cases(portable, portable, fast, set, false);
}

void test_conv2d_packed_act(KernelFn portable, KernelFn fast, const char* set) {
  conv2d_packed_cases(portable, portable_kernel("pocket::conv2d_packed"), fast, set, true);
}

// pocket::conv2d_winograd: the optimized Winograd F(2x2, 3x3) against the portable one, on
// odd sizes and channel counts, padding 0 to 2, batches, and images of many chunks. The
// weight is any (blocks, 4, 4, c_in, 16) tensor. The bound's magnitude follows the algorithm:
// |A^T| (sum over c of |U| |B^T| |d| |B|) |A| + |bias| + |residual|.
void conv2d_winograd_cases(KernelFn portable, KernelFn fast, const char* set, bool act) {
  struct WinoCase {
    int64_t batch, c_in, c_out, h, w, pad;
  };
  const std::vector<WinoCase> cases = {
      {1, 16, 16, 16, 16, 1}, {1, 3, 5, 7, 9, 1},   {2, 17, 20, 9, 8, 1},  {1, 8, 33, 5, 11, 0},
      {1, 24, 40, 40, 37, 1}, {1, 5, 3, 3, 3, 2},   {3, 32, 16, 6, 5, 2},  {1, 64, 64, 4, 4, 1},
      {1, 1, 1, 1, 1, 1},     {2, 12, 48, 21, 22, 1},
      // few tiles: the few-rows tile, channel blocks split over the threads, a last odd block
      {1, 40, 72, 3, 5, 1},   {2, 33, 100, 2, 2, 1},  {1, 64, 128, 4, 4, 1},
  };
  const double bounds[4][2] = {{-INFINITY, INFINITY}, {0.0, INFINITY}, {0.0, 6.0}, {-0.5, 0.25}};
  int i = 0;
  for (const WinoCase& c : cases) {
    const int64_t oh = c.h + 2 * c.pad - 2, ow = c.w + 2 * c.pad - 2, blocks = (c.c_out + 15) / 16;
    const int64_t out_n = c.batch * oh * ow * c.c_out;
    const auto x = random_floats(c.batch * c.h * c.w * c.c_in, 3.0f), b = random_floats(c.c_out);
    const auto u = random_floats(blocks * 16 * c.c_in * 16), r = random_floats(out_n);
    const double* bound = bounds[i % 4];
    const bool bias = i % 3 != 1, residual = i % 2 == 0;
    const char* activation = act ? kConvActivations[i % 4] : nullptr;
    ++i;
    std::vector<float> mag(out_n);
    for (int64_t n = 0; n < c.batch; ++n)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox)
          for (int64_t co = 0; co < c.c_out; ++co) {
            // output (oy, ox) of its tile takes the terms (i, j) with |A|[i][oy % 2], |A|[j][ox % 2]
            // nonzero; term (i, j)'s |V| sums |d| over two rows and two columns of the 4x4 pixels.
            const int64_t ty = oy / 2, tx = ox / 2;
            const int64_t at = ((n * oh + oy) * ow + ox) * c.c_out + co;
            double sum = (bias ? std::fabs(b[co]) : 0.0) + (residual ? std::fabs(r[at]) : 0.0);
            for (int ti = 0; ti < 4; ++ti) {
              if ((oy % 2 == 0 && ti == 3) || (oy % 2 == 1 && ti == 0)) continue;
              for (int tj = 0; tj < 4; ++tj) {
                if ((ox % 2 == 0 && tj == 3) || (ox % 2 == 1 && tj == 0)) continue;
                static const int rows[4][2] = {{0, 2}, {1, 2}, {1, 2}, {1, 3}};  // B^T's nonzeros per term
                for (int64_t ci = 0; ci < c.c_in; ++ci) {
                  double v = 0.0;
                  for (int a : rows[ti])
                    for (int bcol : rows[tj]) {
                      const int64_t iy = 2 * ty - c.pad + a, ix = 2 * tx - c.pad + bcol;
                      if (iy >= 0 && iy < c.h && ix >= 0 && ix < c.w)
                        v += std::fabs(x[((n * c.h + iy) * c.w + ix) * c.c_in + ci]);
                    }
                  sum += v * std::fabs(u[((co / 16 * 16 + ti * 4 + tj) * c.c_in + ci) * 16 + co % 16]);
                }
              }
            }
            mag[at] = static_cast<float>(act ? kActivationMag * sum : sum);
          }
    char what[200];
    std::snprintf(what, sizeof what, "[%s] pocket::conv2d_winograd%s%s x[%lld,%lld,%lld,%lld] c_out %lld p%lld", set,
                  act ? ".act " : "", act ? activation : "", (long long)c.batch, (long long)c.h, (long long)c.w,
                  (long long)c.c_in, (long long)c.c_out, (long long)c.pad);
    auto args = [&](Args& a) {
      a.ptrs = {a.floats({c.batch, c.h, c.w, c.c_in}, x), a.floats({blocks, 4, 4, c.c_in, 16}, u),
                bias ? a.floats({c.c_out}, b) : a.none(),
                residual ? a.floats({c.batch, oh, ow, c.c_out}, r) : a.none(),
                a.integer(c.c_out), a.ints({1, 1}), a.ints({c.pad, c.pad}), a.ints({1, 1}), a.integer(1),
                !std::isinf(bound[0]) ? a.real(bound[0]) : a.none(),
                !std::isinf(bound[1]) ? a.real(bound[1]) : a.none()};
      if (act) a.ptrs.push_back(a.text(activation));
      a.ptrs.push_back(a.output(out_n));
    };
    const std::vector<float> want = run(portable, args, 1, what);
    compare_threads(what, fast, args, want, mag, kFloatTol);
  }
}

void test_conv2d_winograd(KernelFn portable, KernelFn fast, const char* set) {
  conv2d_winograd_cases(portable, fast, set, false);
}

void test_conv2d_winograd_act(KernelFn portable, KernelFn fast, const char* set) {
  conv2d_winograd_cases(portable, fast, set, true);
}

// pocket::max_pool2d_channels_last: a maximum picks one of its inputs, so the results must be
// identical (NaN and the sign of zero: tests/kernels/test_conv_packed.py).
void test_max_pool_channels_last(KernelFn portable, KernelFn fast, const char* set) {
  struct PoolCase {
    int64_t batch, h, w, c, k, stride, pad, dil;
    bool ceil;
  };
  const std::vector<PoolCase> cases = {
      {1, 32, 32, 16, 3, 2, 1, 1, false}, {2, 9, 7, 5, 2, 2, 1, 1, false}, {1, 10, 11, 37, 3, 3, 1, 1, true},
      {1, 5, 6, 72, 5, 1, 2, 1, false},  {1, 12, 9, 21, 3, 1, 0, 2, false}, {1, 7, 7, 1, 3, 2, 1, 1, true},
      {1, 20, 3, 64, 17, 1, 8, 1, false},  // taller than the optimized row's 16 kernel rows
  };
  for (const PoolCase& c : cases) {
    int64_t out[2];
    for (int d = 0; d < 2; ++d) {
      const int64_t in = d == 0 ? c.h : c.w, span = c.dil * (c.k - 1) + 1, room = in + 2 * c.pad - span;
      out[d] = (c.ceil ? (room + c.stride - 1) / c.stride : room / c.stride) + 1;
      if (c.ceil && (out[d] - 1) * c.stride >= in + c.pad) --out[d];
    }
    const auto x = random_floats(c.batch * c.h * c.w * c.c, 3.0f);
    char what[160];
    std::snprintf(what, sizeof what,
                  "[%s] pocket::max_pool2d_channels_last x[%lld,%lld,%lld,%lld] k%lld s%lld p%lld d%lld%s", set,
                  (long long)c.batch, (long long)c.h, (long long)c.w, (long long)c.c, (long long)c.k,
                  (long long)c.stride, (long long)c.pad, (long long)c.dil, c.ceil ? " ceil" : "");
    check_case(what, portable, fast, [&](Args& a, bool) {
      a.ptrs = {a.floats({c.batch, c.h, c.w, c.c}, x), a.ints({c.k, c.k}), a.ints({c.stride, c.stride}),
                a.ints({c.pad, c.pad}), a.ints({c.dil, c.dil}), a.boolean(c.ceil),
                a.output(c.batch * out[0] * out[1] * c.c)};
    }, 0.0, false);
  }
}

// ---- pocket::conv2d_q8, conv2d_q8_packed and conv2d_q8_channels_last: exact integer sums,
// the same scaling as the portable kernel: identical results. The channels-last op runs each
// case three times: float32 x and y; an int8 x, an int8 y or both; an int8 y out of range.

struct ConvQ8Case {
  int64_t batch, c_in, c_out, h, w, kh, kw, stride, pad, dil, groups, zero_point;
};

// (c_out, cin_g, kh, kw) int8 -> the packed layout of conv2d_q8_packed (see parts.h).
std::vector<int8_t> pack_conv(const std::vector<int8_t>& w, const ConvQ8Case& c) {
  const int64_t cin_g = c.c_in / c.groups, cout_g = c.c_out / c.groups, taps = c.kh * c.kw;
  const int64_t blocks = (cout_g + 15) / 16, quads = (cin_g + 3) / 4;
  std::vector<int8_t> p(c.groups * blocks * taps * quads * 64, 0);
  for (int64_t g = 0; g < c.groups; ++g)
    for (int64_t oc = 0; oc < cout_g; ++oc)
      for (int64_t ic = 0; ic < cin_g; ++ic)
        for (int64_t t = 0; t < taps; ++t)
          p[(((g * blocks + oc / 16) * taps + t) * quads + ic / 4) * 64 + oc % 16 * 4 + ic % 4] =
              w[((g * cout_g + oc) * cin_g + ic) * taps + t];
  return p;
}

void test_conv_q8(const char* op, KernelFn portable, KernelFn fast, const char* set) {
  const bool cl = std::strcmp(op, "pocket::conv2d_q8_channels_last") == 0;  // NHWC x, y and residual
  const bool packed = cl || std::strcmp(op, "pocket::conv2d_q8_packed") == 0;
  // Channels per group off every step and tile, positions off the tiles, depthwise 3x3
  // (stride 1 and 2: the fp32 depthwise microkernel on exact sums) and other small groups
  // (portable), extreme zero points, padding wider than the kernel.
  const std::vector<ConvQ8Case> cases = {
      {1, 3, 16, 23, 29, 7, 7, 2, 3, 1, 1, 0},  {2, 5, 17, 9, 11, 3, 3, 1, 1, 1, 1, -128},
      {1, 8, 33, 13, 10, 3, 3, 2, 1, 1, 1, 127}, {1, 7, 40, 6, 9, 1, 1, 1, 0, 1, 1, 37},
      {1, 16, 24, 11, 12, 3, 2, 1, 0, 2, 1, -5}, {2, 12, 8, 7, 9, 3, 3, 1, 1, 1, 2, 3},
      {1, 32, 64, 10, 10, 3, 3, 2, 1, 1, 4, -20}, {1, 256, 8, 5, 6, 3, 3, 1, 1, 1, 1, 11},
      {1, 4, 4, 3, 5, 3, 3, 1, 3, 1, 1, 0},      {1, 6, 6, 9, 9, 3, 3, 1, 1, 1, 6, 2},
      {2, 8, 8, 17, 13, 3, 3, 2, 1, 1, 8, -7},   {1, 5, 5, 2, 3, 3, 3, 1, 1, 1, 5, 0},
      {1, 4, 8, 9, 9, 3, 3, 2, 1, 1, 4, -1},     {1, 6, 6, 9, 9, 5, 5, 1, 2, 1, 6, 9},
      {1, 261, 20, 4, 5, 3, 3, 1, 1, 1, 1, 5},   // channels-last pixels quantized in runs
      {1, 37, 37, 11, 10, 3, 3, 1, 1, 2, 37, -9}, {2, 20, 20, 8, 9, 3, 5, 2, 2, 1, 20, 100},  // depthwise
      {1, 24, 24, 40, 7, 3, 3, 1, 1, 1, 24, 3},  {2, 16, 16, 37, 6, 5, 5, 2, 2, 1, 16, -50},  // bands of rows
      {1, 1, 2, 7, 6, 3, 3, 1, 1, 1, 1, 4},      // 3x3 on one channel, two outputs (not depthwise)
      {1, 2, 16, 9, 11, 3, 3, 2, 1, 1, 1, -3},   // a two-channel image
      // depthwise through dot products: 16 channels (a column's taps one load), a tail of 8
      // channels, 1x9 (three quads, rows of padding only), 7x1
      {1, 16, 16, 12, 20, 3, 3, 1, 1, 1, 16, 7}, {1, 72, 72, 9, 11, 3, 3, 2, 1, 1, 72, -100},
      {1, 19, 19, 6, 30, 1, 9, 1, 4, 1, 19, 11}, {1, 16, 16, 10, 8, 7, 1, 1, 3, 1, 16, 0},
      {1, 20, 20, 7, 23, 3, 3, 2, 2, 2, 20, 5},  // stride = dilation 2: runs of overlapping columns
      {1, 40, 40, 6, 31, 3, 3, 2, 1, 1, 40, 9},  // stride 2, rows of several runs
      {1, 24, 24, 9, 40, 3, 3, 3, 1, 1, 24, 6},  // stride 3: a column shares one pixel with the last
      {1, 33, 33, 5, 45, 3, 3, 1, 1, 1, 33, -3}, // a one-channel tail on long rows
      // no padding, whole quads: an int8 x read where it is (each twice: one pass is int8 x)
      {1, 12, 72, 7, 9, 1, 1, 1, 0, 1, 1, -9},   {1, 12, 72, 7, 9, 1, 1, 1, 0, 1, 1, -9},
      {2, 8, 40, 5, 6, 3, 3, 2, 0, 1, 1, 3},     {2, 8, 40, 5, 6, 3, 3, 2, 0, 1, 1, 3},
      // calls of up to 8 position tiles: 14 tiles per image (a run of 8, one of 6), three
      // groups, the 2-thread split in the second image's first run
      {1, 12, 24, 10, 11, 1, 1, 1, 0, 1, 3, 5},
      // depthwise on few rows (on 2 threads: bands of 3-7 rows) through dot products: batch
      // 2 with a channel tail, 5x5 (two quads), stride 2
      {2, 40, 40, 7, 7, 3, 3, 1, 1, 1, 40, 9},   {1, 72, 72, 14, 14, 5, 5, 1, 2, 1, 72, -20},
      {1, 48, 48, 7, 9, 3, 3, 2, 1, 1, 48, 4},
      // the 7x7 and 14x14 (stride 2) layers at the end of a CNN, many channels
      {1, 144, 144, 7, 7, 3, 3, 1, 1, 1, 144, 2}, {1, 100, 100, 14, 14, 3, 3, 2, 1, 1, 100, -4},
  };
  // out_min > out_max: out_max wins, as in torch.clamp
  const double clamps[4][2] = {{-INFINITY, INFINITY}, {0.0, INFINITY}, {0.0, 6.0}, {2.0, -1.0}};
  int n_case = 0;
  for (int pass = 0; pass < (cl ? 3 : 1); ++pass)
  for (size_t i = 0; i < cases.size(); ++i) {
    const ConvQ8Case& c = cases[i];
    // 1: int8 x, 2: int8 y, 3: both; pass 2: an int8 y without residual whose scaled sums lie
    // far past the int32 range (out_scale 1e-12: only the bounds). Every case has an int8 x
    // in pass 1 or 2 (the paths that read int8 directly).
    const int q8 = pass == 0 ? 0 : pass == 1 ? 1 + int(i % 3) : i % 3 == 1 ? 3 : 2 + int(i % 2);
    const bool x_q8 = q8 & 1, y_q8 = q8 & 2, huge = pass == 2;
    const int64_t oh = (c.h + 2 * c.pad - c.dil * (c.kh - 1) - 1) / c.stride + 1;
    const int64_t ow = (c.w + 2 * c.pad - c.dil * (c.kw - 1) - 1) / c.stride + 1;
    const int64_t cin_g = c.c_in / c.groups, cout_g = c.c_out / c.groups;
    auto x = random_floats(c.batch * c.c_in * c.h * c.w, 3.0f);
    std::vector<int8_t> xi(x.size());
    for (int8_t& v : xi) v = static_cast<int8_t>(static_cast<int>(g_rng() % 256) - 128);
    std::vector<int8_t> w(c.c_out * cin_g * c.kh * c.kw);
    for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(g_rng() % 256) - 128);
    std::vector<float> scales(c.c_out), b = random_floats(c.c_out);
    for (float& v : scales) v = uniform(0.001f, 0.02f);
    const bool bias = n_case % 2 == 0;
    const bool residual = cl && n_case % 4 < 2 && !huge;
    const auto res = random_floats(c.batch * c.c_out * oh * ow, 2.0f);
    const double* clamp = clamps[n_case++ % 4];
    const bool oihw = !packed || cout_g < 4;  // as the exporter stores depthwise weights
    const std::vector<int8_t> wp = oihw ? w : pack_conv(w, c);
    char what[240];
    std::snprintf(what, sizeof what, "[%s] %s x[%lld,%lld,%lld,%lld] c_out %lld k%lldx%lld s%lld p%lld d%lld g%lld zp%lld%s%s%s",
                  set, op, (long long)c.batch, (long long)c.c_in, (long long)c.h, (long long)c.w, (long long)c.c_out,
                  (long long)c.kh, (long long)c.kw, (long long)c.stride, (long long)c.pad, (long long)c.dil,
                  (long long)c.groups, (long long)c.zero_point, residual ? " residual" : "", x_q8 ? " int8 x" : "",
                  y_q8 ? (huge ? " int8 y (out_scale 1e-12)" : " int8 y") : "");
    auto make = [&](Args& a) {
      Value* weight = oihw ? a.tensor(ScalarType::Int8, {c.c_out, cin_g, c.kh, c.kw}, wp)
                           : a.tensor(ScalarType::Int8, {c.groups, (cout_g + 15) / 16, c.kh * c.kw, (cin_g + 3) / 4, 16, 4}, wp);
      Value* xv = x_q8 ? a.tensor(ScalarType::Int8, {c.batch, c.h, c.w, c.c_in}, xi)
                  : cl ? a.floats({c.batch, c.h, c.w, c.c_in}, x) : a.floats({c.batch, c.c_in, c.h, c.w}, x);
      a.ptrs = {xv, weight,
                a.floats({c.c_out}, scales), bias ? a.floats({c.c_out}, b) : a.none()};
      if (cl) a.ptrs.push_back(residual ? a.floats({c.batch, oh, ow, c.c_out}, res) : a.none());
      a.ptrs.push_back(a.real(0.021));
      a.ptrs.push_back(a.integer(c.zero_point));
      if (packed) a.ptrs.push_back(a.ints({c.kh, c.kw}));
      for (Value* v : {a.ints({c.stride, c.stride}), a.ints({c.pad, c.pad}), a.ints({c.dil, c.dil}), a.integer(c.groups)})
        a.ptrs.push_back(v);
      if (packed) {
        a.ptrs.push_back(std::isinf(clamp[0]) ? a.none() : a.real(clamp[0]));
        a.ptrs.push_back(std::isinf(clamp[1]) ? a.none() : a.real(clamp[1]));
      }
      if (cl) {  // out_scale, out_zero_point: about a tenth of the values saturate (huge: all)
        const double out_scale = huge ? 1e-12 : 0.05 * std::sqrt(double(cin_g * c.kh * c.kw));
        a.ptrs.push_back(y_q8 ? a.real(out_scale) : a.none());
        a.ptrs.push_back(y_q8 ? a.integer(-c.zero_point / 2) : a.none());
      }
      const int64_t n_out = c.batch * c.c_out * oh * ow;
      a.ptrs.push_back(y_q8 ? a.output_q8(n_out) : a.output(n_out));
    };
    const std::vector<float> want = run(portable, make, 1, what);
    compare_threads(what, fast, make, want, {}, 0.0);
  }
}

}  // namespace kdiff
