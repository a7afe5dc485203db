"""Small models that exercise Pocket end to end; each factory returns
(model, example_inputs[, dynamic_shapes]) as `pocket export FILE:FACTORY` expects.

    pocket export examples/models.py:mobilenet_v2 -o mobilenet.pocket
"""

import torch
from torch import nn
from torch.export import Dim


class MLP(nn.Module):
    def __init__(self, sizes=(32, 64, 64, 10)):
        super().__init__()
        layers = []
        for a, b in zip(sizes, sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, x):
        return self.net(x)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    """ResNet-style: conv stem, max pool, residual blocks with BatchNorm, global pool, fc."""

    def __init__(self, widths=(16, 32, 64), classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], widths[0]
        for i, w in enumerate(widths):
            blocks += [BasicBlock(cin, w, 1 if i == 0 else 2), BasicBlock(w, w, 1)]
            cin = w
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6()]
        layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden),
                   nn.ReLU6(), nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    """MobileNetV2-style: depthwise convolutions, ReLU6, inverted residuals (width 0.5)."""

    # (expand, out channels, repeats, stride)
    SETTINGS = [(1, 8, 1, 1), (6, 12, 2, 2), (6, 16, 3, 2), (6, 32, 4, 2), (6, 48, 3, 1), (6, 80, 3, 2),
                (6, 160, 1, 1)]

    def __init__(self, classes=1000):
        super().__init__()
        layers = [nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6()]
        cin = 16
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers += [nn.Conv2d(cin, 640, 1, bias=False), nn.BatchNorm2d(640), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(640, classes))

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.mean([2, 3]))


class Encoder(nn.Module):
    """A transformer encoder: multi-head attention, LayerNorm, GELU, with a classifier head."""

    def __init__(self, vocab=100, dim=64, heads=4, layers=2, max_len=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(max_len, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        return self.head(self.norm(self.encoder(x)).mean(1))


def _init_batchnorm(model, seed=0):
    """Random BatchNorm statistics, so folding them is actually tested."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)
    return model.eval()


def mlp():
    return MLP().eval(), (torch.randn(4, 32),)


def resnet():
    return _init_batchnorm(ResNet()), (torch.randn(1, 3, 64, 64),)


def mobilenet_v2():
    return _init_batchnorm(MobileNetV2()), (torch.randn(1, 3, 224, 224),)


def encoder():
    return Encoder().eval(), (torch.randint(0, 100, (2, 16)),)


def dynamic_encoder():
    """The encoder with a dynamic batch (1..8) and sequence length (2..32)."""
    model, inputs = encoder()
    return model, inputs, ({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=2, max=32)},)


class SqueezeExcite(nn.Module):
    """Scales each channel by a gate computed from the channel means: MobileNetV3's (ReLU,
    hardsigmoid) or EfficientNet's (SiLU, sigmoid)."""

    def __init__(self, channels, squeezed, act=torch.relu, gate=nn.functional.hardsigmoid):
        super().__init__()
        self.reduce, self.expand = nn.Conv2d(channels, squeezed, 1), nn.Conv2d(squeezed, channels, 1)
        self.act, self.gate = act, gate

    def forward(self, x):
        return x * self.gate(self.expand(self.act(self.reduce(x.mean((2, 3), keepdim=True)))))


class MobileNetV3Block(nn.Module):
    def __init__(self, cin, kernel, hidden, cout, excite, hardswish, stride):
        super().__init__()
        act = nn.Hardswish if hardswish else nn.ReLU
        layers = [] if hidden == cin else [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), act()]
        layers += [nn.Conv2d(hidden, hidden, kernel, stride, kernel // 2, groups=hidden, bias=False),
                   nn.BatchNorm2d(hidden), act()]
        if excite:
            layers.append(SqueezeExcite(hidden, max(8, (hidden // 4 + 4) // 8 * 8)))
        layers += [nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)
        self.use_res = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV3(nn.Module):
    """MobileNetV3-Small-style: hardswish, squeeze-excitation with a hardsigmoid gate, 3x3 and
    5x5 depthwise convolutions."""

    # (kernel, expanded channels, out channels, squeeze-excite, hardswish, stride)
    SETTINGS = [(3, 16, 16, True, False, 2), (3, 72, 24, False, False, 2), (3, 88, 24, False, False, 1),
                (5, 96, 40, True, True, 2), (5, 240, 40, True, True, 1), (5, 240, 40, True, True, 1),
                (5, 120, 48, True, True, 1), (5, 144, 48, True, True, 1), (5, 288, 96, True, True, 2),
                (5, 576, 96, True, True, 1), (5, 576, 96, True, True, 1)]

    def __init__(self, classes=1000):
        super().__init__()
        layers = [nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish()]
        cin = 16
        for k, hidden, cout, excite, hardswish, stride in self.SETTINGS:
            layers.append(MobileNetV3Block(cin, k, hidden, cout, excite, hardswish, stride))
            cin = cout
        layers += [nn.Conv2d(cin, 576, 1, bias=False), nn.BatchNorm2d(576), nn.Hardswish()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(576, 1024), nn.Hardswish(), nn.Dropout(0.2),
                                        nn.Linear(1024, classes))

    def forward(self, x):
        return self.classifier(self.features(x).mean([2, 3]))


def mobilenet_v3():
    return _init_batchnorm(MobileNetV3()), (torch.randn(1, 3, 224, 224),)


class MBConv(nn.Module):
    """EfficientNet's inverted residual: SiLU after the expansion and the depthwise convolution,
    squeeze-excitation through SiLU and sigmoid, a linear projection."""

    def __init__(self, cin, cout, expand, kernel, stride):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.SiLU()]
        layers += [nn.Conv2d(hidden, hidden, kernel, stride, kernel // 2, groups=hidden, bias=False),
                   nn.BatchNorm2d(hidden), nn.SiLU(),
                   SqueezeExcite(hidden, max(1, cin // 4), nn.functional.silu, torch.sigmoid),
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)
        self.use_res = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class EfficientNet(nn.Module):
    """EfficientNet-B0's layout (SiLU everywhere, as in YOLO's conv-BN-SiLU blocks)."""

    # (expansion, kernel, stride, out channels, repeats)
    SETTINGS = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
                (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]

    def __init__(self, classes=1000):
        super().__init__()
        layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.SiLU()]
        cin = 32
        for expand, k, stride, cout, repeats in self.SETTINGS:
            for i in range(repeats):
                layers.append(MBConv(cin, cout, expand, k, stride if i == 0 else 1))
                cin = cout
        layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.SiLU()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(1280, classes)

    def forward(self, x):
        return self.classifier(self.features(x).mean([2, 3]))


def efficientnet():
    return _init_batchnorm(EfficientNet()), (torch.randn(1, 3, 224, 224),)
