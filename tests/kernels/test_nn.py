"""Neural-network kernels (tables/nn.txt) against ATen."""

import pytest
import torch
from harness import check

import pocket.exporter.custom_ops  # noqa: F401  (registers pocket::convolution_clamp)
from pocket import PocketError

torch.manual_seed(0)

# Convolutions sum up to c_in * kernel taps float32 products in a different order than ATen's
# GEMM-based kernels: absolute differences reach ~1e-5 on sums of ~100 terms of size ~1.
CONV_ATOL = 1e-4


def conv(x, w, b=None, stride=(1,), padding=(0,), dilation=(1,), transposed=False,
         output_padding=(0,), groups=1):
    return [x, w, b, list(stride), list(padding), list(dilation), transposed, list(output_padding),
            groups]


# ---- linear


@pytest.mark.parametrize("in_shape", [(7,), (3, 7), (2, 5, 7), (1, 1, 2, 7)])
@pytest.mark.parametrize("out_features", [1, 6, 17])
@pytest.mark.parametrize("bias", [False, True])
def test_linear(in_shape, out_features, bias):
    k = in_shape[-1]
    b = torch.randn(out_features) if bias else None
    check("aten::linear", [torch.randn(in_shape), torch.randn(out_features, k), b])


def test_linear_long_rows_strides_and_float64():
    check("aten::linear", [torch.randn(3, 301), torch.randn(9, 301), torch.randn(9)])
    check("aten::linear", [torch.randn(7, 4).t(), torch.randn(5, 7), None])
    check("aten::linear", [torch.randn(4, 6), torch.randn(6, 5).t(), torch.randn(10)[::2]])
    d = torch.float64
    check("aten::linear", [torch.randn(2, 8, dtype=d), torch.randn(3, 8, dtype=d), torch.randn(3, dtype=d)])
    check("aten::linear", [torch.randn(0, 4), torch.randn(3, 4), None])


def test_linear_errors():
    with pytest.raises(PocketError, match=r"linear: weight has 5 input features, input has 4"):
        check("aten::linear", [torch.randn(2, 4), torch.randn(3, 5), None], expected=torch.empty(2, 3))
    with pytest.raises(PocketError, match=r"linear: bias has shape \[4\], expected \[3\]"):
        check("aten::linear", [torch.randn(2, 4), torch.randn(3, 4), torch.randn(4)],
              expected=torch.empty(2, 3))
    with pytest.raises(PocketError, match=r"linear: weight has dtype float64, expected float32"):
        check("aten::linear", [torch.randn(2, 4), torch.randn(3, 4).double(), None],
              expected=torch.empty(2, 3))
    with pytest.raises(PocketError, match=r"linear: dtype int64 is not supported"):
        check("aten::linear", [torch.ones(2, 4, dtype=torch.long), torch.ones(3, 4, dtype=torch.long),
                               None], expected=torch.empty(2, 3, dtype=torch.long))


# ---- convolution


CONV2D_CASES = [
    # (n, c_in, h, w), c_out, kernel, stride, padding, dilation, groups
    ((1, 3, 8, 8), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 3, 9, 7), 5, (3, 3), (2, 2), (1, 1), (1, 1), 1),
    ((1, 4, 10, 11), 6, (3, 2), (2, 1), (0, 1), (2, 1), 2),
    ((2, 6, 7, 7), 6, (3, 3), (1, 1), (1, 1), (1, 1), 6),  # depthwise
    ((1, 4, 9, 9), 8, (3, 3), (2, 2), (1, 1), (1, 1), 4),  # depthwise, channel multiplier 2
    ((1, 8, 5, 6), 3, (1, 1), (1, 1), (0, 0), (1, 1), 1),  # pointwise
    ((1, 2, 13, 13), 3, (5, 5), (3, 2), (2, 0), (1, 2), 1),
    ((1, 3, 4, 4), 2, (4, 4), (1, 1), (0, 0), (1, 1), 1),  # kernel covers the input
    ((1, 3, 3, 5), 2, (3, 3), (1, 1), (3, 3), (1, 1), 1),  # padding wider than the kernel
    ((3, 1, 6, 6), 1, (2, 2), (1, 1), (0, 0), (3, 3), 1),
]


@pytest.mark.parametrize("shape,c_out,k,stride,padding,dilation,groups", CONV2D_CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_conv2d(shape, c_out, k, stride, padding, dilation, groups, bias):
    x = torch.randn(shape)
    w = torch.randn(c_out, shape[1] // groups, *k)
    b = torch.randn(c_out) if bias else None
    check("aten::convolution", conv(x, w, b, stride, padding, dilation, groups=groups), atol=CONV_ATOL)


@pytest.mark.parametrize("length,k,stride,padding,dilation,groups", [
    (11, 3, 1, 1, 1, 1), (16, 4, 2, 0, 1, 2), (9, 3, 3, 2, 2, 1), (5, 1, 1, 0, 1, 4)])
def test_conv1d(length, k, stride, padding, dilation, groups):
    x = torch.randn(2, 4, length)
    w = torch.randn(8, 4 // groups, k)
    check("aten::convolution", conv(x, w, torch.randn(8), [stride], [padding], [dilation], groups=groups),
          atol=CONV_ATOL)


def test_conv3d():
    x = torch.randn(1, 4, 5, 6, 7)
    check("aten::convolution", conv(x, torch.randn(3, 4, 3, 3, 3), torch.randn(3), [1, 2, 1], [1, 0, 1]),
          atol=CONV_ATOL)
    check("aten::convolution", conv(x, torch.randn(4, 2, 2, 3, 1), None, [2], [1], [2, 1, 1], groups=2),
          atol=CONV_ATOL)


def test_conv_single_item_param_lists_expand():
    x, w = torch.randn(1, 2, 9, 9), torch.randn(3, 2, 3, 3)
    check("aten::convolution", conv(x, w, None, [2], [1], [1]), atol=CONV_ATOL)


def test_conv_non_contiguous_and_float64():
    x = torch.randn(1, 7, 8, 3).permute(0, 3, 1, 2)  # channels-last memory
    w = torch.randn(4, 3, 2, 2)
    check("aten::convolution", conv(x, w, torch.randn(4), [1, 1], [1, 1], [1, 1]), atol=CONV_ATOL)
    check("aten::convolution", conv(x, w.transpose(2, 3), None, [1, 2], [0, 0], [1, 1]), atol=CONV_ATOL)
    d = torch.float64
    check("aten::convolution", conv(torch.randn(2, 3, 6, 6, dtype=d), torch.randn(2, 3, 3, 3, dtype=d),
                                    torch.randn(2, dtype=d), [1, 1], [1, 1], [1, 1]))


# ---- pocket::convolution_clamp: a convolution with a fused ReLU / ReLU6 / clamp


@pytest.mark.parametrize("shape,c_out,k,stride,padding,dilation,groups", CONV2D_CASES[:8])
@pytest.mark.parametrize("bounds", [(0.0, None), (0.0, 6.0), (None, -0.25), (-1.0, 1.0), (2.0, -2.0)])
def test_convolution_clamp(shape, c_out, k, stride, padding, dilation, groups, bounds):
    x, w, b = torch.randn(shape) * 2, torch.randn(c_out, shape[1] // groups, *k), torch.randn(c_out)
    args = [x, w, b, list(stride), list(padding), list(dilation), groups, *bounds]
    expected = torch.ops.pocket.convolution_clamp(*args)
    assert torch.equal(expected, torch.clamp(torch.nn.functional.conv2d(x, w, b, stride, padding, dilation, groups),
                                             *bounds))
    check("pocket::convolution_clamp", args, atol=CONV_ATOL, expected=expected)


def test_convolution_clamp_1d_3d_float64_and_nan():
    x1 = torch.randn(2, 4, 19)
    check("pocket::convolution_clamp", [x1, torch.randn(6, 2, 3), None, [2], [1], [1], 2, 0.0, None], atol=CONV_ATOL)
    x3 = torch.randn(1, 3, 5, 6, 4, dtype=torch.float64)
    w3 = torch.randn(2, 3, 3, 3, 3, dtype=torch.float64)
    check("pocket::convolution_clamp", [x3, w3, None, [1], [1], [1], 1, -0.5, 0.5])
    x = torch.randn(1, 2, 5, 5)
    x[0, 0, 2, 2] = float("nan")  # NaN stays NaN through the clamp, as in torch
    got = check("pocket::convolution_clamp", [x, torch.randn(3, 2, 3, 3), None, [1], [1], [1], 1, 0.0, 6.0],
                atol=CONV_ATOL)
    assert torch.isnan(got[0]).any()


def test_convolution_clamp_errors():
    x, w = torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3)
    with pytest.raises(PocketError, match="convolution_clamp: out_max is NaN, expected a number or None"):
        check("pocket::convolution_clamp", [x, w, None, [1], [1], [1], 1, 0.0, float("nan")],
              expected=torch.empty(1, 3, 5, 5))
    with pytest.raises(PocketError, match=r"convolution: input has 2 channels, not divisible by groups 3"):
        check("pocket::convolution_clamp", [x, w, None, [1], [1], [1], 3, 0.0, None], expected=torch.empty(1, 3, 5, 5))


def test_conv_mobilenet_block_shapes():
    # The three layer kinds of a MobileNetV2 block at a reduced resolution.
    x = torch.randn(1, 24, 28, 28)
    check("aten::convolution", conv(x, torch.randn(144, 24, 1, 1), torch.randn(144), [1, 1], [0, 0], [1, 1]),
          atol=CONV_ATOL)
    h = torch.randn(1, 144, 28, 28)
    check("aten::convolution", conv(h, torch.randn(144, 1, 3, 3), torch.randn(144), [2, 2], [1, 1], [1, 1],
                                    groups=144), atol=CONV_ATOL)
    check("aten::convolution", conv(h, torch.randn(32, 144, 1, 1), None, [1, 1], [0, 0], [1, 1]),
          atol=CONV_ATOL)


TRANSPOSED_CASES = [
    # (n, c_in, h, w), c_out, kernel, stride, padding, dilation, output_padding, groups
    ((1, 3, 5, 5), 4, (3, 3), (1, 1), (0, 0), (1, 1), (0, 0), 1),
    ((2, 4, 4, 6), 2, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 5, 4), 6, (2, 3), (2, 3), (0, 1), (1, 1), (1, 2), 2),
    ((1, 2, 3, 3), 3, (3, 2), (1, 2), (1, 0), (2, 2), (0, 1), 1),
    ((1, 6, 7, 7), 6, (4, 4), (2, 2), (1, 1), (1, 1), (0, 0), 6),
]


@pytest.mark.parametrize("shape,c_out,k,stride,padding,dilation,output_padding,groups", TRANSPOSED_CASES)
def test_conv_transposed2d(shape, c_out, k, stride, padding, dilation, output_padding, groups):
    x = torch.randn(shape)
    w = torch.randn(shape[1], c_out // groups, *k)
    check("aten::convolution", conv(x, w, torch.randn(c_out), stride, padding, dilation, True,
                                    output_padding, groups), atol=CONV_ATOL)


def test_conv_transposed1d_and_3d():
    check("aten::convolution", conv(torch.randn(2, 3, 7), torch.randn(3, 5, 4), torch.randn(5), [3], [1],
                                    [1], True, [2]), atol=CONV_ATOL)
    check("aten::convolution", conv(torch.randn(1, 2, 3, 4, 3), torch.randn(2, 3, 2, 2, 2), None, [2], [0],
                                    [1], True, [1]), atol=CONV_ATOL)


def test_conv_errors():
    x = torch.randn(1, 4, 8, 8)
    out = torch.empty(1, 2, 6, 6)
    with pytest.raises(PocketError, match=r"convolution: weight has 3 input channels, input has 4"):
        check("aten::convolution", conv(x, torch.randn(2, 3, 3, 3), None, [1], [0], [1]), expected=out)
    with pytest.raises(PocketError, match=r"convolution: input has 4 channels, not divisible by groups 3"):
        check("aten::convolution", conv(x, torch.randn(3, 1, 3, 3), None, [1], [0], [1], groups=3),
              expected=out)
    with pytest.raises(PocketError, match=r"convolution: weight has 3 output channels, not divisible by groups 2"):
        check("aten::convolution", conv(x, torch.randn(3, 2, 3, 3), None, [1], [0], [1], groups=2),
              expected=out)
    with pytest.raises(PocketError, match=r"convolution: spatial dim -1: input size 8, kernel size 9"):
        check("aten::convolution", conv(x, torch.randn(2, 4, 3, 9), None, [1], [0], [1]), expected=out)
    with pytest.raises(PocketError, match=r"convolution: stride has 3 items, expected 1 or 2"):
        check("aten::convolution", conv(x, torch.randn(2, 4, 3, 3), None, [1, 1, 1], [0], [1]), expected=out)
    with pytest.raises(PocketError, match=r"convolution: stride\[0\] is 0, expected 1 to 4294967296"):
        check("aten::convolution", conv(x, torch.randn(2, 4, 3, 3), None, [0], [0], [1]), expected=out)
    with pytest.raises(PocketError, match=r"convolution: padding\[1\] is -1, expected 0 to"):
        check("aten::convolution", conv(x, torch.randn(2, 4, 3, 3), None, [1], [0, -1], [1]), expected=out)
    with pytest.raises(PocketError, match=r"convolution: padding\[0\] is 4611686018427387904"):
        check("aten::convolution", conv(x, torch.randn(2, 4, 3, 3), None, [1], [2**62], [1]), expected=out)
    with pytest.raises(PocketError, match=r"convolution: input \[4, 8, 8\] and weight \[2, 4, 3, 3\] must both"):
        check("aten::convolution", conv(x[0], torch.randn(2, 4, 3, 3), None, [1], [0], [1]), expected=out)
    with pytest.raises(PocketError, match=r"convolution: bias has shape \[3\], expected \[2\]"):
        check("aten::convolution", conv(x, torch.randn(2, 4, 3, 3), torch.randn(3), [1], [0], [1]),
              expected=out)
    with pytest.raises(PocketError, match=r"convolution: output_padding 2 must be smaller than stride"):
        check("aten::convolution", conv(x, torch.randn(4, 2, 3, 3), None, [2], [0], [1], True, [2]),
              expected=out)
    with pytest.raises(PocketError, match=r"convolution: output shape \[1, 2, 6, 6\] does not fit"):
        check("aten::convolution", conv(x, torch.randn(2, 4, 3, 3), None, [1], [0], [1]),
              expected=torch.empty(1, 2, 5, 5))


# ---- batch norm, layer norm, group norm


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 7), (2, 5, 4, 3), (1, 2, 2, 3, 2)])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_no_training(shape, affine):
    c = shape[1]
    w, b = (torch.randn(c), torch.randn(c)) if affine else (None, None)
    check("aten::_native_batch_norm_legit_no_training",
          [torch.randn(shape), w, b, torch.randn(c), torch.rand(c) + 0.1, 0.1, 1e-5])


def test_batch_norm_strides_float64_and_errors():
    x = torch.randn(2, 5, 6, 3).permute(0, 3, 1, 2)
    check("aten::_native_batch_norm_legit_no_training",
          [x, torch.randn(3), None, torch.randn(3), torch.rand(3), 0.1, 1e-3])
    d = torch.float64
    check("aten::_native_batch_norm_legit_no_training",
          [torch.randn(2, 3, 4, dtype=d), None, torch.randn(3, dtype=d), torch.randn(3, dtype=d),
           torch.rand(3, dtype=d), 0.0, 1e-5])
    empty = torch.empty(0)
    with pytest.raises(PocketError, match=r"_native_batch_norm_legit_no_training: running_var has shape \[4\], expected \[3\]"):
        check("aten::_native_batch_norm_legit_no_training",
              [torch.randn(2, 3, 4), None, None, torch.randn(3), torch.rand(4), 0.1, 1e-5],
              expected=(torch.empty(2, 3, 4), empty, empty))
    with pytest.raises(PocketError, match=r"_native_batch_norm_legit_no_training: input has 1 dims"):
        check("aten::_native_batch_norm_legit_no_training",
              [torch.randn(3), None, None, torch.randn(3), torch.rand(3), 0.1, 1e-5],
              expected=(torch.empty(3), empty, empty))


@pytest.mark.parametrize("shape,norm", [((5, 8), 1), ((2, 3, 16), 1), ((2, 3, 4, 5), 2), ((3, 4, 5), 3),
                                        ((2, 7, 1), 1)])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm(shape, norm, affine):
    ns = list(shape[-norm:])
    w = torch.randn(ns) if affine != "none" else None
    b = torch.randn(ns) if affine == "both" else None
    check("aten::native_layer_norm", [torch.randn(shape) * 3 + 1, ns, w, b, 1e-5])


def test_layer_norm_strides_and_errors():
    check("aten::native_layer_norm", [torch.randn(6, 4).t(), [6], torch.randn(6), torch.randn(6), 1e-6])
    x = torch.randn(2, 3, 4)
    outs = (torch.empty(2, 3, 4), torch.empty(2, 3, 1), torch.empty(2, 3, 1))
    with pytest.raises(PocketError, match=r"native_layer_norm: normalized_shape \(1 dims\) does not match the last dims of input \[2, 3, 4\]"):
        check("aten::native_layer_norm", [x, [3], None, None, 1e-5], expected=outs)
    with pytest.raises(PocketError, match=r"native_layer_norm: weight has shape \[5\], expected normalized_shape"):
        check("aten::native_layer_norm", [x, [4], torch.randn(5), None, 1e-5], expected=outs)


@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((1, 4, 3, 3), 4), ((3, 8, 2, 2), 1), ((2, 6), 2)])
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm(shape, groups, affine):
    n, c = shape[:2]
    hw = 1
    for s in shape[2:]:
        hw *= s
    w, b = (torch.randn(c), torch.randn(c)) if affine else (None, None)
    check("aten::native_group_norm", [torch.randn(shape), w, b, n, c, hw, groups, 1e-5])


def test_group_norm_errors():
    x = torch.randn(2, 6, 5)
    outs = (torch.empty(2, 6, 5), torch.empty(2, 4), torch.empty(2, 4))
    with pytest.raises(PocketError, match=r"native_group_norm: 6 channels cannot be split into 4 groups"):
        check("aten::native_group_norm", [x, None, None, 2, 6, 5, 4, 1e-5], expected=outs)
    with pytest.raises(PocketError, match=r"native_group_norm: input \[2, 6, 5\] does not match N=2, C=6, HxW=4"):
        check("aten::native_group_norm", [x, None, None, 2, 6, 4, 3, 1e-5], expected=outs)


# ---- pooling


POOL_CASES = [
    # (shape, kernel, stride, padding, dilation)
    ((1, 2, 8, 8), [2, 2], [], [0, 0], [1, 1]),
    ((2, 3, 9, 7), [3, 3], [2, 2], [1, 1], [1, 1]),
    ((1, 1, 10, 11), [3, 2], [2, 1], [1, 0], [2, 1]),
    ((3, 7, 7), [3], [2], [1], [1]),
    ((1, 2, 5, 6), [2, 3], [3, 2], [1, 1], [1, 1]),
    ((1, 1, 6, 6), [2, 2], [2, 2], [0, 0], [2, 2]),
]


@pytest.mark.parametrize("shape,k,stride,padding,dilation", POOL_CASES)
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool2d(shape, k, stride, padding, dilation, ceil_mode):
    check("aten::max_pool2d_with_indices", [torch.randn(shape), k, stride, padding, dilation, ceil_mode])


def test_max_pool2d_nan_inf_strides_float64():
    x = torch.randn(1, 1, 4, 4)
    x[0, 0, 0, 1] = float("nan")
    x[0, 0, 3, :] = float("-inf")
    x[0, 0, 2, 3] = float("nan")
    check("aten::max_pool2d_with_indices", [x, [2, 2], [2, 2], [0, 0], [1, 1], False])
    check("aten::max_pool2d_with_indices", [torch.full((1, 1, 3, 3), float("-inf")), [2, 2], [1, 1], [1, 1],
                                            [1, 1], False])
    check("aten::max_pool2d_with_indices", [torch.randn(1, 6, 6, 2).permute(0, 3, 1, 2), [3, 3], [2, 2],
                                            [1, 1], [1, 1], True])
    check("aten::max_pool2d_with_indices", [torch.randn(2, 2, 5, 5, dtype=torch.float64), [2, 2], [], [1, 1],
                                            [1, 1], False])


@pytest.mark.parametrize("k,stride,padding,dilation", [([3, 3], [2, 2], [1, 1], [1, 1]), ([3, 3], [1, 1], [1, 1], [1, 1]),
                                                     ([2, 4], [3, 3], [1, 2], [1, 2]), ([5, 3], [1, 2], [2, 0], [1, 3])])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_max_pool2d_wide_rows_ties_nan(k, stride, padding, dilation, dtype):
    """Rows wider than the kernel's chunk of columns (256), values from a few integers so that
    windows tie (the first position wins), NaN and -inf scattered: the same values and indices
    as ATen."""
    g = torch.Generator().manual_seed(7)
    x = torch.randint(-2, 3, (2, 3, 9, 601), generator=g).to(dtype)
    spots = torch.rand(x.shape, generator=g)
    x[spots < 0.01] = float("nan")
    x[(spots > 0.5) & (spots < 0.53)] = float("-inf")
    for ceil_mode in (False, True):
        check("aten::max_pool2d_with_indices", [x, k, stride, padding, dilation, ceil_mode])


def test_max_pool2d_errors():
    x = torch.randn(1, 1, 4, 4)
    outs = (torch.empty(1, 1, 2, 2), torch.empty(1, 1, 2, 2, dtype=torch.int64))
    with pytest.raises(PocketError, match=r"max_pool2d_with_indices: padding 2 is more than half the kernel extent 3"):
        check("aten::max_pool2d_with_indices", [x, [3, 3], [1, 1], [2, 2], [1, 1], False], expected=outs)
    with pytest.raises(PocketError, match=r"max_pool2d_with_indices: input \[1, 1, 4, 4\] is too small for kernel size 5"):
        check("aten::max_pool2d_with_indices", [x, [5, 5], [1, 1], [0, 0], [1, 1], False], expected=outs)
    with pytest.raises(PocketError, match=r"max_pool2d_with_indices: input has shape \[4, 4\], expected"):
        check("aten::max_pool2d_with_indices", [x[0, 0], [2, 2], [], [0, 0], [1, 1], False], expected=outs)
    with pytest.raises(PocketError, match=r"max_pool2d_with_indices: kernel_size\[1\] is 0"):
        check("aten::max_pool2d_with_indices", [x, [2, 0], [], [0, 0], [1, 1], False], expected=outs)


AVG_CASES = [
    # (shape, kernel, stride, padding)
    ((1, 2, 8, 8), [2, 2], [], [0, 0]),
    ((2, 3, 9, 7), [3, 3], [2, 2], [1, 1]),
    ((1, 1, 10, 11), [3, 2], [2, 1], [1, 0]),
    ((3, 7, 7), [3], [2], [1]),
    ((1, 2, 5, 6), [4, 3], [3, 2], [2, 1]),
]


@pytest.mark.parametrize("shape,k,stride,padding", AVG_CASES)
@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("count_include_pad", [False, True])
def test_avg_pool2d(shape, k, stride, padding, ceil_mode, count_include_pad):
    check("aten::avg_pool2d", [torch.randn(shape), k, stride, padding, ceil_mode, count_include_pad, None])


def test_avg_pool2d_divisor_override_strides_and_errors():
    check("aten::avg_pool2d", [torch.randn(1, 2, 6, 6), [3, 3], [2, 2], [1, 1], True, False, 5])
    check("aten::avg_pool2d", [torch.randn(1, 5, 5, 3).permute(0, 3, 1, 2), [2, 2], [1, 1], [0, 0], False,
                               True, None])
    with pytest.raises(PocketError, match=r"avg_pool2d: divisor_override must be non-zero"):
        check("aten::avg_pool2d", [torch.randn(1, 1, 4, 4), [2, 2], [], [0, 0], False, True, 0],
              expected=torch.empty(1, 1, 2, 2))
    with pytest.raises(PocketError, match=r"avg_pool2d: padding 2 is more than half the kernel extent 2"):
        check("aten::avg_pool2d", [torch.randn(1, 1, 4, 4), [2, 2], [], [2, 2], False, True, None],
              expected=torch.empty(1, 1, 2, 2))


@pytest.mark.parametrize("shape,out", [((1, 3, 8, 8), [1, 1]), ((2, 2, 7, 9), [3, 4]), ((3, 5, 5), [5, 5]),
                                        ((1, 2, 4, 6), [7, 2]), ((1, 1, 10, 10), [3, 1])])
def test_adaptive_avg_pool2d(shape, out):
    check("aten::_adaptive_avg_pool2d", [torch.randn(shape), out])


def test_adaptive_avg_pool2d_strides_and_errors():
    check("aten::_adaptive_avg_pool2d", [torch.randn(1, 7, 7, 4).permute(0, 3, 1, 2), [2, 3]])
    with pytest.raises(PocketError, match=r"_adaptive_avg_pool2d: output_size has 1 items, expected 2"):
        check("aten::_adaptive_avg_pool2d", [torch.randn(1, 1, 4, 4), [1]], expected=torch.empty(1, 1, 1, 1))
    with pytest.raises(PocketError, match=r"_adaptive_avg_pool2d: output_size\[1\] is 0, expected 1 to"):
        check("aten::_adaptive_avg_pool2d", [torch.randn(1, 1, 4, 4), [1, 0]], expected=torch.empty(1, 1, 1, 1))
    with pytest.raises(PocketError, match=r"_adaptive_avg_pool2d: input has shape \[4, 4\]"):
        check("aten::_adaptive_avg_pool2d", [torch.randn(4, 4), [2, 2]], expected=torch.empty(2, 2))


# ---- softmax


@pytest.mark.parametrize("op", ["aten::_softmax", "aten::_log_softmax"])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((), 0),
                                       ((2, 1000), -1), ((0, 3), 1)])
def test_softmax(op, shape, dim):
    check(op, [torch.randn(shape) * 5, dim, False])


@pytest.mark.parametrize("op", ["aten::_softmax", "aten::_log_softmax"])
def test_softmax_strides_extremes_float64(op):
    check(op, [torch.randn(6, 5).t(), 1, False])
    check(op, [torch.randn(4, 10)[:, ::3], 0, False])
    x = torch.tensor([[1000.0, 0.0, -1000.0], [float("-inf"), 1.0, 2.0], [float("-inf")] * 3])
    check(op, [x, 1, False])
    check(op, [torch.randn(3, 4, dtype=torch.float64), -1, False])


def test_softmax_errors():
    with pytest.raises(PocketError, match=r"_softmax: half_to_float=True needs float16 input"):
        check("aten::_softmax", [torch.randn(3), 0, True], expected=torch.empty(3))
    with pytest.raises(PocketError, match=r"_log_softmax: dim 2 out of range for a 2-d tensor"):
        check("aten::_log_softmax", [torch.randn(3, 4), 2, False], expected=torch.empty(3, 4))
    with pytest.raises(PocketError, match=r"_softmax: dtype int64 is not supported"):
        check("aten::_softmax", [torch.arange(3), 0, False], expected=torch.empty(3, dtype=torch.int64))


# ---- embedding


@pytest.mark.parametrize("idx_dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("idx_shape", [(5,), (2, 3), (2, 1, 4), ()])
def test_embedding(idx_dtype, idx_shape):
    w = torch.randn(10, 6)
    idx = torch.randint(0, 10, idx_shape, dtype=idx_dtype)
    check("aten::embedding", [w, idx, -1, False, False])


def test_embedding_strides_and_dtypes():
    idx = torch.randint(0, 7, (4, 6))
    check("aten::embedding", [torch.randn(5, 7).t(), idx[:, ::2], 2, False, False])
    check("aten::embedding", [torch.randint(-9, 9, (7, 3), dtype=torch.int32), idx, -1, False, False])


def test_embedding_errors():
    w = torch.randn(10, 4)
    with pytest.raises(PocketError, match=r"embedding: index 12 is out of range for a weight of 10 rows"):
        check("aten::embedding", [w, torch.tensor([1, 12, 3]), -1, False, False], expected=torch.empty(3, 4))
    with pytest.raises(PocketError, match=r"embedding: index -1 is out of range"):
        check("aten::embedding", [w, torch.tensor([-1]), -1, False, False], expected=torch.empty(1, 4))
    with pytest.raises(PocketError, match=r"embedding: indices have dtype float32, expected int64 or int32"):
        check("aten::embedding", [w, torch.tensor([1.0]), -1, False, False], expected=torch.empty(1, 4))


# ---- constant_pad_nd


@pytest.mark.parametrize("shape,pad", [((5,), [1, 2]), ((3, 4), [0, 1, 2, 0]), ((2, 3, 4), [1, 1, 1, 1, 1, 1]),
                                       ((3, 6), [-1, 2]), ((4, 5), [2, -3, -1, -1]), ((2, 3), []),
                                       ((1, 2, 3, 4), [3, 3])])
@pytest.mark.parametrize("value", [0.0, -1.5])
def test_constant_pad_nd(shape, pad, value):
    check("aten::constant_pad_nd", [torch.randn(shape), pad, value])


def test_constant_pad_nd_dtypes_and_strides():
    check("aten::constant_pad_nd", [torch.randint(-5, 5, (3, 4)), [1, 2, 3, 0], 7])
    check("aten::constant_pad_nd", [torch.randn(3, 4) > 0, [1, 1], True])
    check("aten::constant_pad_nd", [torch.randn(5, 4).t(), [2, -1, 0, 1], 0.5])
    check("aten::constant_pad_nd", [torch.randn(3, 2), [-1, -1], 0.0])  # crops to zero width


def test_constant_pad_nd_errors():
    x = torch.randn(3, 4)
    with pytest.raises(PocketError, match=r"constant_pad_nd: pad has 3 items, expected an even number up to 4"):
        check("aten::constant_pad_nd", [x, [1, 1, 1], 0.0], expected=torch.empty(3, 6))
    with pytest.raises(PocketError, match=r"constant_pad_nd: pad has 6 items"):
        check("aten::constant_pad_nd", [x, [1] * 6, 0.0], expected=torch.empty(5, 6))
    with pytest.raises(PocketError, match=r"constant_pad_nd: padding \(-3, -2\) makes dim 1 of size 4 negative"):
        check("aten::constant_pad_nd", [x, [-3, -2], 0.0], expected=torch.empty(3, 0))
    with pytest.raises(PocketError, match=r"constant_pad_nd: padding \(0, 4611686018427387904\) is too large"):
        check("aten::constant_pad_nd", [x, [0, 2**62], 0.0], expected=torch.empty(3, 4))


@pytest.mark.parametrize("n,k,m", [(1, 1, 1), (3, 5, 7), (17, 33, 9)])
def test_mm_bmm_addmm(n, k, m):
    a, b = torch.randn(n, k), torch.randn(k, m)
    check("aten::mm", [a, b])
    check("aten::mm", [torch.randn(k, n).t(), torch.randn(m, k).t()])  # transposed operands
    check("aten::bmm", [torch.randn(4, n, k), torch.randn(4, k, m)])
    check("aten::bmm", [torch.randn(4, k, n).transpose(1, 2), torch.randn(4, k, m)])
    check("aten::addmm", [torch.randn(m), a, b, 0.5, 2.0])
    check("aten::addmm", [torch.randn(n, 1), a, b, 1, 1])


def test_mm_shape_mismatch_is_an_error():
    with pytest.raises(PocketError, match=r"mm: shapes \[2, 3\] and \[4, 5\] cannot be multiplied"):
        check("aten::mm", [torch.randn(2, 3), torch.randn(4, 5)], expected=torch.empty(2, 5))
