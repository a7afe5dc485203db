// kernel_diff_test: linear_q and linear_q_packed (the harness: kernel_diff.h).
#include "kernel_diff.h"

namespace kdiff {

// A random quantized weight (n, k) in the layouts of schema/QUANTIZATION.md; `unit`: all
// scales 1 and mins small integers (exact-integer checks). `half`: scales and mins are passed
// as float16 (their values here are float16 values).
struct QWeight {
  int bits;
  bool sym;
  int64_t n, k, g;
  std::vector<uint8_t> q;
  std::vector<float> scales, mins;
  float wmax = 0;  // max |dequantized weight| bound
  bool half = false;
};

float to_half_value(float v) { return detail::half_to_float(detail::float_to_half(v)); }

std::vector<uint16_t> half_bits(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = detail::float_to_half(v[i]);
  return out;
}

// Scales or mins of w (sizes as given) in w's dtype.
Value* scale_tensor(Args& a, const QWeight& w, std::vector<int64_t> sizes, const std::vector<float>& v) {
  return w.half ? a.tensor(ScalarType::Float16, sizes, half_bits(v)) : a.floats(sizes, v);
}

QWeight make_qweight(int bits, bool sym, int64_t n, int64_t k, int64_t g, bool unit, bool half = false) {
  QWeight w{bits, sym, n, k, g, {}, {}, {}, 0, half};
  const int qmax = bits == 4 ? (sym ? 7 : 15) : (sym ? 127 : 255), qmin = sym ? (bits == 4 ? -8 : -128) : 0;
  std::vector<int> vals(n * k);
  for (int& v : vals) v = qmin + static_cast<int>(g_rng() % (qmax - qmin + 1));
  if (bits == 4) {
    w.q.resize(n * k / 2);
    for (int64_t i = 0; i < n * k / 2; ++i) {
      const int o = sym ? 8 : 0;
      w.q[i] = static_cast<uint8_t>((vals[2 * i] + o) | ((vals[2 * i + 1] + o) << 4));
    }
  } else {
    w.q.resize(n * k);
    for (int64_t i = 0; i < n * k; ++i) w.q[i] = static_cast<uint8_t>(vals[i]);
  }
  for (int64_t i = 0; i < n * (k / g); ++i) {
    float s = unit ? 1.0f : uniform(0.001f, 0.05f);
    float m = sym ? 0.0f : unit ? static_cast<float>(static_cast<int>(g_rng() % 7) - 3) : uniform(-0.5f, 0.5f);
    if (half) {
      s = to_half_value(i % 13 == 4 && !unit ? s * 1e-3f : s);  // some float16 subnormals (< 6.1e-5)
      m = to_half_value(m);
    }
    w.scales.push_back(s);
    if (!sym) w.mins.push_back(m);
    w.wmax = std::max(w.wmax, std::fabs(s) * std::max(std::abs(qmin), qmax) + std::fabs(m));
  }
  return w;
}

void add_linear_q_args(Args& a, const QWeight& w, const std::vector<float>& x, int64_t m, const std::vector<float>* bias,
                       int act_mode) {
  Value* qv = w.bits == 8 && w.sym ? a.tensor(ScalarType::Int8, {w.n, w.k}, w.q)
                                   : a.tensor(ScalarType::UInt8, {w.n, w.bits == 4 ? w.k / 2 : w.k}, w.q);
  a.ptrs = {a.floats({m, w.k}, x), qv, scale_tensor(a, w, {w.n, w.k / w.g}, w.scales),
            w.sym ? a.none() : scale_tensor(a, w, {w.n, w.k / w.g}, w.mins), bias ? a.floats({w.n}, *bias) : a.none(),
            a.integer(w.bits), a.integer(w.g), a.integer(act_mode), a.output(m * w.n)};
}

// A float16-scale weight gives exactly what the same weight with float32 scales of the same
// values gives, on the portable and the optimized kernel (1 thread).
void check_half_scales(KernelFn portable, KernelFn fast, const QWeight& w,
                       const std::function<void(Args&, const QWeight&)>& make, const char* what) {
  QWeight w32 = w;
  w32.half = false;
  auto with = [&make](const QWeight& v) { return [&make, &v](Args& a) { make(a, v); }; };
  const std::string wp = std::string(what) + " float16 = float32 scales (portable)";
  compare(wp.c_str(), run(portable, with(w), 1, wp.c_str()), run(portable, with(w32), 1, wp.c_str()), {}, 0.0);
  const std::string wf = std::string(what) + " float16 = float32 scales";
  compare(wf.c_str(), run(fast, with(w), 1, wf.c_str()), run(fast, with(w32), 1, wf.c_str()), {}, 0.0);
}

// The magnitude bound of a linear layer's outputs: Σ|x| of the row · max|w| + |bias|.
std::vector<float> linear_magnitude(const std::vector<float>& x, int64_t m, int64_t k, int64_t n, float wmax,
                                    const std::vector<float>* bias) {
  std::vector<float> mag(m * n);
  for (int64_t r = 0; r < m; ++r) {
    float sx = 0;
    for (int64_t c = 0; c < k; ++c) sx += std::fabs(x[r * k + c]);
    for (int64_t c = 0; c < n; ++c) mag[r * n + c] = sx * wmax + (bias != nullptr ? std::fabs((*bias)[c]) : 0.0f);
  }
  return mag;
}

void test_linear_q(KernelFn portable, KernelFn fast, const char* set) {
  struct Mode {
    int act_mode;
    int64_t g, k;
  };
  // act_mode 0: groups of 16 (a run of 16 each), 32, 48 (a run of 32 and one of 16), 128 (four
  // runs of 32) and 6 (the portable kernel); 130 groups of 16 (more than a tile widens at once).
  const std::vector<Mode> modes = {{0, 16, 48},  {0, 32, 96},  {0, 48, 144}, {0, 128, 256}, {0, 6, 30},
                                   {0, 16, 2080}, {1, 32, 64}, {1, 64, 192}, {1, 10, 50},  {2, 32, 96},
                                   {2, 64, 128},  {1, 96, 192}};
  for (int bits : {4, 8})
    for (bool sym : {true, false})
      for (const Mode& md : modes)
        for (int64_t m : {1, 2, 7, 33}) {
          const int64_t n = pick({1, 3, 5, 9, 18});
          const bool half = m == 2 || m == 33;  // float16 scales: the gemv and the GEMM path
          const QWeight w = make_qweight(bits, sym, n, md.k, md.g, false, half);
          const auto x = random_floats(m * md.k, 3.0f), b = random_floats(n);
          const bool bias = (m + n) % 2 == 1;
          char what[160];
          std::snprintf(what, sizeof what, "[%s] pocket::linear_q %d-bit %s%s act_mode=%d g=%lld m=%lld k=%lld n=%lld",
                        set, bits, sym ? "sym" : "asym", half ? " f16" : "", md.act_mode, (long long)md.g,
                        (long long)m, (long long)md.k, (long long)n);
          const std::vector<float> mag = linear_magnitude(x, m, md.k, n, w.wmax, bias ? &b : nullptr);
          auto make = [&](Args& a) { add_linear_q_args(a, w, x, m, bias ? &b : nullptr, md.act_mode); };
          const std::vector<float> want = run(portable, make, 1, what);
          // int8 activations: exact integer sums, double scaling (1 ulp-level differences).
          const double tol = md.act_mode == 0 ? kFloatTol : 1e-6;
          compare_threads(what, fast, make, want, mag, tol);
          if (half)
            check_half_scales(
                portable, fast, w,
                [&](Args& a, const QWeight& v) { add_linear_q_args(a, v, x, m, bias ? &b : nullptr, md.act_mode); },
                what);
        }
  // Exact integers: scales 1, integer mins, x integer with |x| max 127 in every row and
  // every block of 32 (activation scale exactly 1): results are integers, bit-exact.
  for (int bits : {4, 8})
    for (bool sym : {true, false})
      for (int act_mode : {1, 2})
        for (int64_t m : {1, 2, 7, 33}) {
          const int64_t k = 128, g = act_mode == 2 ? 32 : 64, n = 11;
          const QWeight w = make_qweight(bits, sym, n, k, g, true, m == 2);
          std::vector<float> x(m * k);
          for (int64_t i = 0; i < m * k; ++i)
            x[i] = i % 32 == 5 ? 127.0f : static_cast<float>(static_cast<int>(g_rng() % 255) - 127);
          char what[128];
          std::snprintf(what, sizeof what, "[%s] pocket::linear_q exact %d-bit %s act_mode=%d m=%lld", set, bits,
                        sym ? "sym" : "asym", act_mode, (long long)m);
          auto make = [&](Args& a) { add_linear_q_args(a, w, x, m, nullptr, act_mode); };
          const std::vector<float> want = run(portable, make, 1, what);
          compare(what, run(fast, make, 2, what), want, {}, 0.0);
        }
}

// A QWeight (n % 16 == 0, k % 8 == 0) in linear_q_packed's layout (quant_util.h): byte
// [b][t][4c + i] holds, of row 16b + c, 4-bit: columns 8t + i (low nibble) and 8t + 4 + i
// (high); 8-bit: column 4t + i. Scales and mins (n / 16, groups, 16).
QWeight pack_linear(const QWeight& w) {
  QWeight p = w;
  const int64_t step = w.bits == 4 ? 8 : 4, steps = w.k / step, groups = w.k / w.g;
  auto nibble = [&](int64_t r, int64_t c) { return (w.q[r * w.k / 2 + c / 2] >> (c % 2 * 4)) & 0x0F; };
  for (int64_t r = 0; r < w.n; ++r)
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t i = 0; i < 4; ++i)
        p.q[((r / 16) * steps + t) * 64 + r % 16 * 4 + i] =
            w.bits == 4 ? static_cast<uint8_t>(nibble(r, 8 * t + i) | (nibble(r, 8 * t + 4 + i) << 4))
                        : w.q[r * w.k + 4 * t + i];
  for (int64_t r = 0; r < w.n; ++r)
    for (int64_t j = 0; j < groups; ++j) {
      p.scales[((r / 16) * groups + j) * 16 + r % 16] = w.scales[r * groups + j];
      if (!w.sym) p.mins[((r / 16) * groups + j) * 16 + r % 16] = w.mins[r * groups + j];
    }
  return p;
}

void add_linear_q_packed_args(Args& a, const QWeight& p, const std::vector<float>& x, int64_t m,
                              const std::vector<float>* bias, int act_mode) {
  const int64_t blocks = p.n / 16, groups = p.k / p.g, step = p.bits == 4 ? 8 : 4;
  const ScalarType dtype = p.bits == 8 && p.sym ? ScalarType::Int8 : ScalarType::UInt8;
  a.ptrs = {a.floats({m, p.k}, x), a.tensor(dtype, {blocks, p.k / step, 64}, p.q),
            scale_tensor(a, p, {blocks, groups, 16}, p.scales),
            p.sym ? a.none() : scale_tensor(a, p, {blocks, groups, 16}, p.mins),
            bias ? a.floats({p.n}, *bias) : a.none(), a.integer(p.bits), a.integer(p.g), a.integer(act_mode),
            a.output(m * p.n)};
}

void test_linear_q_packed(KernelFn portable, KernelFn fast, const char* set) {
  struct Mode {
    int act_mode;
    int64_t g, k;
  };
  // one step per group, odd step counts, several blocks of 32 per group in act_mode 2
  const std::vector<Mode> modes = {{1, 8, 40}, {1, 24, 72}, {1, 32, 160}, {2, 32, 96}, {2, 64, 128}};
  for (int bits : {4, 8})
    for (bool sym : {true, false})
      for (const Mode& md : modes)
        for (int64_t m : {1, 2, 3, 5}) {
          const int64_t n = pick({16, 32, 48});
          const bool half = m == 2 || m == 5;  // float16 scales: a full tile and single rows
          const QWeight w = pack_linear(make_qweight(bits, sym, n, md.k, md.g, false, half));
          auto x = random_floats(m * md.k, 3.0f);
          const auto b = random_floats(n);
          if (m >= 2) std::fill(x.begin() + md.k, x.begin() + 2 * md.k, 0.0f);  // a row of zeros: scale 0
          const bool bias = m % 2 == 1;
          char what[160];
          std::snprintf(what, sizeof what,
                        "[%s] pocket::linear_q_packed %d-bit %s%s act_mode=%d g=%lld m=%lld k=%lld n=%lld", set, bits,
                        sym ? "sym" : "asym", half ? " f16" : "", md.act_mode, (long long)md.g, (long long)m,
                        (long long)md.k, (long long)n);
          const std::vector<float> mag = linear_magnitude(x, m, md.k, n, w.wmax, bias ? &b : nullptr);
          auto make = [&](Args& a) { add_linear_q_packed_args(a, w, x, m, bias ? &b : nullptr, md.act_mode); };
          const std::vector<float> want = run(portable, make, 1, what);
          compare_threads(what, fast, make, want, mag, kFloatTol);
          if (half)
            check_half_scales(
                portable, fast, w,
                [&](Args& a, const QWeight& v) { add_linear_q_packed_args(a, v, x, m, bias ? &b : nullptr, md.act_mode); },
                what);
        }
  for (int bits : {4, 8})
    for (bool sym : {true, false})
      for (int act_mode : {1, 2})
        for (int64_t m : {1, 2, 5}) {
          const int64_t k = 128, g = act_mode == 2 ? 32 : 64, n = 32;
          const QWeight w = pack_linear(make_qweight(bits, sym, n, k, g, true, m == 2));
          std::vector<float> x(m * k);
          for (int64_t i = 0; i < m * k; ++i)
            x[i] = i % 32 == 5 ? 127.0f : static_cast<float>(static_cast<int>(g_rng() % 255) - 127);
          char what[128];
          std::snprintf(what, sizeof what, "[%s] pocket::linear_q_packed exact %d-bit %s act_mode=%d m=%lld", set, bits,
                        sym ? "sym" : "asym", act_mode, (long long)m);
          auto make = [&](Args& a) { add_linear_q_packed_args(a, w, x, m, nullptr, act_mode); };
          const std::vector<float> want = run(portable, make, 1, what);
          compare(what, run(fast, make, 2, what), want, {}, 0.0);
        }
}

}  // namespace kdiff
