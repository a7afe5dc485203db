"""The first two kernels, and the harness itself."""

import pytest
import torch
from harness import check

from pocket import PocketError


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((2, 1, 5), (3, 1)), ((), (2, 2)), ((0, 3), (3,))])
@pytest.mark.parametrize("alpha", [1, 2.5])
def test_add_broadcast(shapes, alpha):
    a, b = torch.randn(shapes[0]), torch.randn(shapes[1])
    check("aten::add.Tensor", [a, b, alpha])


def test_add_non_contiguous_and_int():
    a = torch.randn(5, 3).t()
    b = torch.randn(6, 5)[::2]  # (3, 5), every other row
    check("aten::add.Tensor", [a, b, 1])
    i = torch.randint(-5, 5, (4, 3))
    check("aten::add.Tensor", [i, i[:1], 3])


def test_add_mismatched_shapes_is_an_error():
    with pytest.raises(PocketError, match=r"shapes \[3\] and \[4\] cannot be broadcast"):
        check("aten::add.Tensor", [torch.randn(3), torch.randn(4), 1], expected=torch.empty(4))


def test_relu():
    check("aten::relu", [torch.randn(4, 5)])
    check("aten::relu", [torch.randn(4, 5).t()])
