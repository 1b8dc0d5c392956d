"""Common vision / sequence architectures in plain ``torch.nn``, written for
Lathe's fixtures from the published architecture descriptions (the papers
and the layer tables of the usual reference configurations): block
structure, op kinds, strides, groups, normalisation, residuals,
squeeze-excite, channel shuffle and shifted windows follow those
descriptions. This is not the torchvision source and there are no
pretrained weights: parameters are random under a fixed seed.

Every builder takes ``full``: ``False`` gives the committed fixture, a
reduced width / depth / resolution that keeps every block kind of the
network (every stage, the stride-2 block and the repeated stride-1 block of
each stage, every branch kind), so the op mix and graph shape are the real
network's; ``True`` gives the real configuration (224x224, real widths and
depths, 1000 classes) for benchmarking.

``ARCHITECTURES`` lists them: name -> Arch(build(full), input shape small,
input shape full, description).
"""

import math
from dataclasses import dataclass
from typing import Callable, List, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def divisible(v: float, divisor: int = 8) -> int:
    """Round a channel count to a multiple of ``divisor``, never more than
    10% below ``v`` (the rounding MobileNet/EfficientNet/MnasNet use)."""
    n = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if n < 0.9 * v:
        n += divisor
    return n


def conv_bn(cin, cout, k, stride=1, groups=1, act=None, eps=1e-5, padding=None):
    """Conv2d (no bias) + BatchNorm2d (+ activation module)."""
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2 if padding is None else padding, groups=groups,
                        bias=False), nn.BatchNorm2d(cout, eps=eps)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


def nclasses(full):
    return 1000 if full else 10


# -- ResNet-18 (He et al. 2015, table 1) ------------------------------------------------
class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + identity)


class ResNet(nn.Module):
    def __init__(self, widths, depths, num_classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        stages, cin = [], widths[0]
        for i, (w, d) in enumerate(zip(widths, depths)):
            blocks = []
            for j in range(d):
                blocks.append(BasicBlock(cin, w, 2 if (j == 0 and i > 0) else 1))
                cin = w
            stages.append(nn.Sequential(*blocks))
        self.layers = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet18(full):
    if full:
        return ResNet([64, 128, 256, 512], [2, 2, 2, 2], 1000)
    # stage 1 keeps two identity blocks; stages 2-4: the stride-2 projection block
    return ResNet([12, 24, 48, 96], [2, 1, 1, 1], 10)


# -- MobileNetV2 (Sandler et al. 2018, table 2) -------------------------------------------
class InvertedResidualV2(nn.Module):
    def __init__(self, cin, cout, stride, t):
        super().__init__()
        hidden = cin * t
        self.use_res = stride == 1 and cin == cout
        layers = []
        if t != 1:
            layers.append(conv_bn(cin, hidden, 1, act=nn.ReLU6))
        layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden, act=nn.ReLU6), conv_bn(hidden, cout, 1)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


MBV2_CFG = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
            (6, 320, 1, 1)]  # t (expansion), c, n (repeats), s


class MobileNetV2(nn.Module):
    def __init__(self, width, max_repeats, num_classes):
        super().__init__()
        cin = divisible(32 * width)
        last = divisible(1280 * max(1.0, width)) if width >= 1.0 else divisible(1280 * width)
        layers = [conv_bn(3, cin, 3, 2, act=nn.ReLU6)]
        for t, c, n, s in MBV2_CFG:
            cout = divisible(c * width)
            for i in range(min(n, max_repeats)):
                layers.append(InvertedResidualV2(cin, cout, s if i == 0 else 1, t))
                cin = cout
        layers.append(conv_bn(cin, last, 1, act=nn.ReLU6))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))

    def forward(self, x):
        x = self.features(x)
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def mobilenet_v2(full):
    return MobileNetV2(1.0, 99, 1000) if full else MobileNetV2(0.25, 2, 10)


# -- MobileNetV3-Small (Howard et al. 2019, table 2) ---------------------------------------
class SqueezeExcite(nn.Module):
    """Global average pool, 1x1 conv reduce + act, 1x1 conv expand, gate, scale."""

    def __init__(self, channels, squeeze, act=nn.ReLU, gate=nn.Hardsigmoid):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.act = act()
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.gate = gate()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(self.act(self.fc1(s))))


class InvertedResidualV3(nn.Module):
    def __init__(self, cin, k, exp, cout, se, act, stride):
        super().__init__()
        self.use_res = stride == 1 and cin == cout
        layers = []
        if exp != cin:
            layers.append(conv_bn(cin, exp, 1, act=act, eps=1e-3))
        layers.append(conv_bn(exp, exp, k, stride, groups=exp, act=act, eps=1e-3))
        if se:
            layers.append(SqueezeExcite(exp, divisible(exp // 4)))
        layers.append(conv_bn(exp, cout, 1, eps=1e-3))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.block(x) if self.use_res else self.block(x)


RE, HS = nn.ReLU, nn.Hardswish
MBV3_SMALL_CFG = [  # kernel, expansion, out, SE, activation, stride
    (3, 16, 16, True, RE, 2), (3, 72, 24, False, RE, 2), (3, 88, 24, False, RE, 1), (5, 96, 40, True, HS, 2),
    (5, 240, 40, True, HS, 1), (5, 240, 40, True, HS, 1), (5, 120, 48, True, HS, 1), (5, 144, 48, True, HS, 1),
    (5, 288, 96, True, HS, 2), (5, 576, 96, True, HS, 1), (5, 576, 96, True, HS, 1)]


class MobileNetV3Small(nn.Module):
    def __init__(self, width, skip, num_classes, hidden):
        super().__init__()
        cin = divisible(16 * width)
        layers = [conv_bn(3, cin, 3, 2, act=HS, eps=1e-3)]
        for i, (k, e, c, se, act, s) in enumerate(MBV3_SMALL_CFG):
            if i in skip:
                continue
            cout = divisible(c * width)
            layers.append(InvertedResidualV3(cin, k, divisible(e * width), cout, se, act, s))
            cin = cout
        last = 6 * cin
        layers.append(conv_bn(cin, last, 1, act=HS, eps=1e-3))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(last, hidden), nn.Hardswish(), nn.Dropout(0.2),
                                        nn.Linear(hidden, num_classes))

    def forward(self, x):
        x = self.features(x)
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def mobilenet_v3_small(full):
    # small: drop the third repeat of the two three-block groups (two stride-1 residuals stay in each)
    return MobileNetV3Small(1.0, (), 1000, 1024) if full else MobileNetV3Small(0.5, (5, 10), 10, 128)


# -- EfficientNet-B0 (Tan & Le 2019, table 1) ----------------------------------------------
class MBConv(nn.Module):
    def __init__(self, cin, cout, k, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = []
        if expand != 1:
            layers.append(conv_bn(cin, hidden, 1, act=nn.SiLU))
        layers += [conv_bn(hidden, hidden, k, stride, groups=hidden, act=nn.SiLU),
                   SqueezeExcite(hidden, max(1, cin // 4), act=nn.SiLU, gate=nn.Sigmoid),
                   conv_bn(hidden, cout, 1)]
        self.block = nn.Sequential(*layers)

    def forward(self, x):  # (stochastic depth is the identity in eval)
        return x + self.block(x) if self.use_res else self.block(x)


EFFNET_B0_CFG = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
                 (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]  # expansion, kernel, stride, out, layers


class EfficientNet(nn.Module):
    def __init__(self, width, depths, num_classes):
        super().__init__()
        cin = divisible(32 * width)
        layers = [conv_bn(3, cin, 3, 2, act=nn.SiLU)]
        for (e, k, s, c, n), d in zip(EFFNET_B0_CFG, depths):
            cout = divisible(c * width)
            for i in range(min(n, d)):
                layers.append(MBConv(cin, cout, k, s if i == 0 else 1, e))
                cin = cout
        last = divisible(1280 * width)
        layers.append(conv_bn(cin, last, 1, act=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))

    def forward(self, x):
        x = self.features(x)
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def efficientnet_b0(full):
    # small: one block in the stages whose residual kind another stage already has
    return EfficientNet(1.0, [99] * 7, 1000) if full else EfficientNet(0.25, [1, 2, 1, 2, 1, 2, 1], 10)


# -- ShuffleNet V2 1.0x (Ma et al. 2018, table 5) -------------------------------------------
def channel_shuffle(x, groups):
    b, c, h, w = x.shape
    x = x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous()
    return x.view(b, c, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        half = cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(conv_bn(cin, cin, 3, stride, groups=cin), conv_bn(cin, half, 1, act=nn.ReLU))
        b2_in = cin if stride > 1 else half
        self.branch2 = nn.Sequential(conv_bn(b2_in, half, 1, act=nn.ReLU), conv_bn(half, half, 3, stride, groups=half),
                                     conv_bn(half, half, 1, act=nn.ReLU))

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, channels, repeats, num_classes):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, channels[0], 3, 2, act=nn.ReLU), nn.MaxPool2d(3, 2, 1))
        stages, cin = [], channels[0]
        for cout, n in zip(channels[1:4], repeats):
            units = [ShuffleUnit(cin, cout, 2)] + [ShuffleUnit(cout, cout, 1) for _ in range(n - 1)]
            stages.append(nn.Sequential(*units))
            cin = cout
        self.stages = nn.Sequential(*stages)
        self.conv5 = conv_bn(cin, channels[4], 1, act=nn.ReLU)
        self.fc = nn.Linear(channels[4], num_classes)

    def forward(self, x):
        x = self.conv5(self.stages(self.stem(x)))
        return self.fc(x.mean([2, 3]))


def shufflenet_v2_x1_0(full):
    if full:
        return ShuffleNetV2([24, 116, 232, 464, 1024], [4, 8, 4], 1000)
    return ShuffleNetV2([24, 48, 96, 192, 256], [2, 2, 2], 10)  # the 0.5x widths, conv5 256


# -- DenseNet-121 (Huang et al. 2017, table 1) ---------------------------------------------
class DenseLayer(nn.Module):
    def __init__(self, cin, growth, bn_size):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, bn_size * growth, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth)
        self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, 1, 1, bias=False)

    def forward(self, features: List[torch.Tensor]):
        x = torch.cat(features, 1)
        y = self.conv1(F.relu(self.norm1(x)))
        return self.conv2(F.relu(self.norm2(y)))


class DenseBlock(nn.Module):
    def __init__(self, n, cin, growth, bn_size):
        super().__init__()
        self.layers = nn.ModuleList([DenseLayer(cin + i * growth, growth, bn_size) for i in range(n)])

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(layer(features))
        return torch.cat(features, 1)


class Transition(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, cout, 1, bias=False), nn.AvgPool2d(2, 2))


class DenseNet(nn.Module):
    def __init__(self, growth, blocks, init_features, bn_size, num_classes):
        super().__init__()
        layers = [nn.Conv2d(3, init_features, 7, 2, 3, bias=False), nn.BatchNorm2d(init_features), nn.ReLU(),
                  nn.MaxPool2d(3, 2, 1)]
        c = init_features
        for i, n in enumerate(blocks):
            layers.append(DenseBlock(n, c, growth, bn_size))
            c += n * growth
            if i != len(blocks) - 1:
                layers.append(Transition(c, c // 2))
                c //= 2
        layers.append(nn.BatchNorm2d(c))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(c, num_classes)

    def forward(self, x):
        x = F.relu(self.features(x))
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def densenet121(full):
    return DenseNet(32, (6, 12, 24, 16), 64, 4, 1000) if full else DenseNet(8, (2, 3, 4, 2), 16, 4, 10)


# -- RegNetY-400MF (Radosavovic et al. 2020; w0=48, wa=27.89, wm=2.09, d=16, g=8, SE 0.25) -------
class YBlock(nn.Module):
    """X block (1x1, grouped 3x3, 1x1 bottleneck, ratio 1) with SE after the 3x3."""

    def __init__(self, cin, cout, stride, group_width, se_ratio):
        super().__init__()
        groups = cout // group_width
        self.a = conv_bn(cin, cout, 1, act=nn.ReLU)
        self.b = conv_bn(cout, cout, 3, stride, groups=groups, act=nn.ReLU)
        self.se = SqueezeExcite(cout, int(round(se_ratio * cin)), act=nn.ReLU, gate=nn.Sigmoid)
        self.c = conv_bn(cout, cout, 1)
        self.proj = conv_bn(cin, cout, 1, stride) if (cin != cout or stride != 1) else None

    def forward(self, x):
        shortcut = x if self.proj is None else self.proj(x)
        return F.relu(shortcut + self.c(self.se(self.b(self.a(x)))))


class RegNet(nn.Module):
    def __init__(self, widths, depths, group_width, num_classes, stem=32):
        super().__init__()
        self.stem = conv_bn(3, stem, 3, 2, act=nn.ReLU)
        stages, cin = [], stem
        for w, d in zip(widths, depths):
            stages.append(nn.Sequential(*[YBlock(cin if i == 0 else w, w, 2 if i == 0 else 1, group_width, 0.25)
                                          for i in range(d)]))
            cin = w
        self.trunk = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.trunk(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def regnet_y_400mf(full):
    if full:
        return RegNet([48, 104, 208, 440], [1, 3, 6, 6], 8, 1000)
    return RegNet([16, 32, 64, 128], [1, 2, 2, 1], 8, 10, stem=16)


# -- ConvNeXt-T (Liu et al. 2022) ---------------------------------------------------------
class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor (permute to NHWC and back)."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, layer_scale):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.layer_scale = nn.Parameter(torch.full((dim, 1, 1), layer_scale))

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.pwconv2(F.gelu(self.pwconv1(self.norm(y))))
        return x + self.layer_scale * y.permute(0, 3, 1, 2)  # (stochastic depth: identity in eval)


class ConvNeXt(nn.Module):
    def __init__(self, dims, depths, num_classes, layer_scale):
        super().__init__()
        layers = [nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), LayerNorm2d(dims[0], eps=1e-6))]
        for i, (d, n) in enumerate(zip(dims, depths)):
            if i > 0:
                layers.append(nn.Sequential(LayerNorm2d(dims[i - 1], eps=1e-6), nn.Conv2d(dims[i - 1], d, 2, 2)))
            layers.append(nn.Sequential(*[ConvNeXtBlock(d, layer_scale) for _ in range(n)]))
        self.features = nn.Sequential(*layers)
        self.norm = LayerNorm2d(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], num_classes)

    def forward(self, x):
        x = self.norm(F.adaptive_avg_pool2d(self.features(x), 1))
        return self.head(torch.flatten(x, 1))


def convnext_tiny(full):
    # The paper initialises layer scale to 1e-6; a random fixture would then be almost
    # the identity through every block, so both sizes start it at 0.5 here.
    if full:
        return ConvNeXt([96, 192, 384, 768], [3, 3, 9, 3], 1000, 0.5)
    return ConvNeXt([12, 24, 48, 96], [1, 1, 2, 1], 10, 0.5)


# -- MnasNet-A1 1.0 without SE, as in the common mnasnet1_0 (Tan et al. 2019) ----------------
class MnasBlock(nn.Module):
    def __init__(self, cin, cout, k, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.layers = nn.Sequential(conv_bn(cin, hidden, 1, act=nn.ReLU),
                                    conv_bn(hidden, hidden, k, stride, groups=hidden, act=nn.ReLU),
                                    conv_bn(hidden, cout, 1))

    def forward(self, x):
        return x + self.layers(x) if self.use_res else self.layers(x)


MNAS_CFG = [(24, 3, 2, 3, 3), (40, 5, 2, 3, 3), (80, 5, 2, 6, 3), (96, 3, 1, 6, 2), (192, 5, 2, 6, 4),
            (320, 3, 1, 6, 1)]  # out, kernel, stride, expansion, repeats


class MnasNet(nn.Module):
    def __init__(self, alpha, max_repeats, num_classes):
        super().__init__()
        c0, c1 = divisible(32 * alpha), divisible(16 * alpha)
        layers = [conv_bn(3, c0, 3, 2, act=nn.ReLU), conv_bn(c0, c0, 3, 1, groups=c0, act=nn.ReLU),
                  conv_bn(c0, c1, 1)]
        cin = c1
        for c, k, s, e, n in MNAS_CFG:
            cout = divisible(c * alpha)
            for i in range(min(n, max_repeats)):
                layers.append(MnasBlock(cin, cout, k, s if i == 0 else 1, e))
                cin = cout
        last = 1280 if alpha >= 1.0 else divisible(1280 * alpha)
        layers.append(conv_bn(cin, last, 1, act=nn.ReLU))
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))

    def forward(self, x):
        return self.classifier(self.layers(x).mean([2, 3]))


def mnasnet1_0(full):
    return MnasNet(1.0, 99, 1000) if full else MnasNet(0.25, 2, 10)


# -- GoogLeNet / Inception v1 (Szegedy et al. 2014, table 1), BN after every conv ----------
class BasicConv(nn.Sequential):
    def __init__(self, cin, cout, k, stride=1, padding=0):
        super().__init__(nn.Conv2d(cin, cout, k, stride, padding, bias=False), nn.BatchNorm2d(cout, eps=1e-3),
                         nn.ReLU(inplace=True))


class Inception(nn.Module):
    def __init__(self, cin, c1, c3r, c3, c5r, c5, pool_proj):
        super().__init__()
        self.branch1 = BasicConv(cin, c1, 1)
        self.branch2 = nn.Sequential(BasicConv(cin, c3r, 1), BasicConv(c3r, c3, 3, padding=1))
        self.branch3 = nn.Sequential(BasicConv(cin, c5r, 1), BasicConv(c5r, c5, 5, padding=2))
        self.branch4 = nn.Sequential(nn.MaxPool2d(3, 1, 1, ceil_mode=True), BasicConv(cin, pool_proj, 1))

    def forward(self, x):
        return torch.cat([self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)], 1)


GOOGLENET_CFG = {  # #1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj
    "3a": (64, 96, 128, 16, 32, 32), "3b": (128, 128, 192, 32, 96, 64),
    "4a": (192, 96, 208, 16, 48, 64), "4b": (160, 112, 224, 24, 64, 64), "4c": (128, 128, 256, 24, 64, 64),
    "4d": (112, 144, 288, 32, 64, 64), "4e": (256, 160, 320, 32, 128, 128),
    "5a": (256, 160, 320, 32, 128, 128), "5b": (384, 192, 384, 48, 128, 128)}


class GoogLeNet(nn.Module):
    def __init__(self, width, stages, num_classes):
        super().__init__()
        w = lambda c: max(4, int(c * width))  # noqa: E731
        self.stem = nn.Sequential(BasicConv(3, w(64), 7, 2, 3), nn.MaxPool2d(3, 2, ceil_mode=True),
                                  BasicConv(w(64), w(64), 1), BasicConv(w(64), w(192), 3, padding=1),
                                  nn.MaxPool2d(3, 2, ceil_mode=True))
        layers, cin = [], w(192)
        for i, names in enumerate(stages):
            if i > 0:  # 3x3/2 after stage 3, 2x2/2 after stage 4
                layers.append(nn.MaxPool2d(3 if i == 1 else 2, 2, ceil_mode=True))
            for n in names:
                cfg = [w(c) for c in GOOGLENET_CFG[n]]
                layers.append(Inception(cin, *cfg))
                cin = cfg[0] + cfg[2] + cfg[4] + cfg[5]
        self.inceptions = nn.Sequential(*layers)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):  # (the auxiliary classifiers are training-only)
        x = self.inceptions(self.stem(x))
        return self.fc(self.dropout(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)))


def googlenet(full):
    if full:
        return GoogLeNet(1.0, [["3a", "3b"], ["4a", "4b", "4c", "4d", "4e"], ["5a", "5b"]], 1000)
    return GoogLeNet(0.25, [["3a", "3b"], ["4a"], ["5a"]], 10)


# -- Swin-T (Liu et al. 2021) ---------------------------------------------------------------
class WindowAttention(nn.Module):
    """(Shifted) window multi-head self-attention with a relative position
    bias, on NHWC input. Pads H and W up to a multiple of the window, rolls
    by -shift, attends inside each window (masking pairs that came from
    different regions before the roll), rolls back and crops."""

    def __init__(self, dim, heads, window, shift):
        super().__init__()
        self.heads, self.window, self.shift = heads, window, shift
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.table = nn.Parameter(torch.randn((2 * window - 1) ** 2, heads) * 0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (window - 1)
        self.register_buffer("relative_position_index", (rel[..., 0] * (2 * window - 1) + rel[..., 1]).flatten())

    def forward(self, x):
        B, H, W, C = x.shape
        ws, nh = self.window, self.heads
        pad_b, pad_r = (ws - H % ws) % ws, (ws - W % ws) % ws
        x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
        _, pH, pW, _ = x.shape
        shift = 0 if ws >= pH else self.shift  # a single window needs no shift
        if shift > 0:
            x = torch.roll(x, shifts=(-shift, -shift), dims=(1, 2))
        nw = (pH // ws) * (pW // ws)
        x = x.view(B, pH // ws, ws, pW // ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B * nw, ws * ws, C)
        q, k, v = self.qkv(x).reshape(x.size(0), ws * ws, 3, nh, C // nh).permute(2, 0, 3, 1, 4)
        attn = (q * (C // nh) ** -0.5) @ k.transpose(-2, -1)
        bias = self.table[self.relative_position_index].view(ws * ws, ws * ws, nh).permute(2, 0, 1)
        attn = attn + bias.unsqueeze(0)
        if shift > 0:
            region = x.new_zeros((pH, pW))
            cuts = ((0, -ws), (-ws, -shift), (-shift, None))
            n = 0
            for h in cuts:
                for w in cuts:
                    region[h[0]:h[1], w[0]:w[1]] = n
                    n += 1
            region = region.view(pH // ws, ws, pW // ws, ws).permute(0, 2, 1, 3).reshape(nw, ws * ws)
            mask = region.unsqueeze(1) - region.unsqueeze(2)
            mask = mask.masked_fill(mask != 0, -100.0)
            attn = attn.view(B, nw, nh, ws * ws, ws * ws) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, nh, ws * ws, ws * ws)
        attn = F.softmax(attn, dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(x.size(0), ws * ws, C)
        x = self.proj(x)
        x = x.view(B, pH // ws, pW // ws, ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B, pH, pW, C)
        if shift > 0:
            x = torch.roll(x, shifts=(shift, shift), dims=(1, 2))
        return x[:, :H, :W, :].contiguous()


class SwinBlock(nn.Module):
    def __init__(self, dim, heads, window, shift):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, heads, window, shift)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Dropout(0.0), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchMerging(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(4 * dim)
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x):  # NHWC, H and W even
        x = torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1)
        return self.reduction(self.norm(x))


class SwinTransformer(nn.Module):
    def __init__(self, embed, depths, heads, window, num_classes):
        super().__init__()
        self.patch = nn.Conv2d(3, embed, 4, 4)
        self.patch_norm = nn.LayerNorm(embed)
        layers, dim = [], embed
        for i, (d, h) in enumerate(zip(depths, heads)):
            if i > 0:
                layers.append(PatchMerging(dim))
                dim *= 2
            layers += [SwinBlock(dim, h, window, 0 if j % 2 == 0 else window // 2) for j in range(d)]
        self.layers = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch_norm(self.patch(x).permute(0, 2, 3, 1))
        x = self.norm(self.layers(x)).permute(0, 3, 1, 2)
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def swin_t(full):
    if full:
        return SwinTransformer(96, [2, 2, 6, 2], [3, 6, 12, 24], 7, 1000)
    # 64x64: 16x16 patches padded to 21x21 (3x3 windows, shifted), 8x8 -> 14x14 (2x2, shifted),
    # then 4x4 and 2x2, each padded to one 7x7 window (no shift)
    return SwinTransformer(12, [2, 2, 1, 1], [1, 2, 4, 8], 7, 10)


# -- Transformer encoder (Vaswani et al. 2017, post-norm, as nn.TransformerEncoderLayer) -------
class EncoderLayer(nn.Module):
    def __init__(self, d, heads, ff, dropout=0.1):
        super().__init__()
        self.heads = heads
        self.in_proj = nn.Linear(d, 3 * d)
        self.out_proj = nn.Linear(d, d)
        self.linear1 = nn.Linear(d, ff)
        self.linear2 = nn.Linear(ff, d)
        self.norm1 = nn.LayerNorm(d)
        self.norm2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.in_proj(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = self.norm1(x + self.dropout(self.out_proj(a.transpose(1, 2).reshape(B, T, C))))
        return self.norm2(x + self.dropout(self.linear2(self.dropout(F.relu(self.linear1(x))))))


class TransformerEncoder(nn.Module):
    """Sinusoidal positions added to [B, T, d] features, N post-norm layers, final LayerNorm."""

    def __init__(self, d, heads, ff, layers, max_len):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(max_len, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        self.register_buffer("pe", pe)
        self.layers = nn.ModuleList([EncoderLayer(d, heads, ff) for _ in range(layers)])
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        x = x + self.pe[: x.size(1)]
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


def transformer_encoder(full):
    return TransformerEncoder(512, 8, 2048, 6, 512) if full else TransformerEncoder(64, 4, 256, 2, 64)


# -- FastSpeech 2 variance adaptor predictors (Ren et al. 2020) ---------------------------
class VariancePredictor(nn.Module):
    """Conv1d + ReLU + LayerNorm over channels + Dropout, twice, then a
    Linear to one value per frame, on [B, C, T]."""

    def __init__(self, cin, filters, k, dropout=0.5):
        super().__init__()
        self.conv1 = nn.Conv1d(cin, filters, k, padding=(k - 1) // 2)
        self.norm1 = nn.LayerNorm(filters)
        self.conv2 = nn.Conv1d(filters, filters, k, padding=(k - 1) // 2)
        self.norm2 = nn.LayerNorm(filters)
        self.dropout = nn.Dropout(dropout)
        self.linear = nn.Linear(filters, 1)

    def forward(self, x):  # [B, C, T] -> [B, T]
        x = self.dropout(self.norm1(F.relu(self.conv1(x)).transpose(1, 2)).transpose(1, 2))
        x = self.dropout(self.norm2(F.relu(self.conv2(x)).transpose(1, 2)))
        return self.linear(x).squeeze(-1)


class VarianceAdaptor(nn.Module):
    """Duration, pitch and energy predictors on the encoder output [B, C, T];
    the predicted pitch is embedded back with a Conv1d and added before the
    energy predictor (FastSpeech 2's order). Returns (log duration, pitch,
    energy), each [B, T]."""

    def __init__(self, channels, filters, k):
        super().__init__()
        self.duration = VariancePredictor(channels, filters, k)
        self.pitch = VariancePredictor(channels, filters, k)
        self.pitch_embed = nn.Conv1d(1, channels, k, padding=(k - 1) // 2)
        self.energy = VariancePredictor(channels, filters, k)

    def forward(self, x):
        log_duration = self.duration(x)
        pitch = self.pitch(x)
        x = x + self.pitch_embed(pitch.unsqueeze(1))
        return log_duration, pitch, self.energy(x)


def tts_variance_adaptor(full):
    return VarianceAdaptor(256, 256, 3) if full else VarianceAdaptor(64, 64, 3)


@dataclass
class Arch:
    build: Callable[[bool], nn.Module]
    small_input: Tuple[int, ...]
    full_input: Tuple[int, ...]
    description: str


def _image(n):
    return (1, 3, n, n)


ARCHITECTURES = {
    "resnet18": Arch(resnet18, _image(64), _image(224),
                     "ResNet-18: 7x7/2 stem + maxpool, basic blocks (two 3x3 conv-BN, ReLU, identity or 1x1/2 "
                     "projection shortcut); small: widths 12-96, blocks [2,1,1,1]"),
    "mobilenet_v2": Arch(mobilenet_v2, _image(64), _image(224),
                         "MobileNetV2: inverted residuals (1x1 expand, 3x3 depthwise, linear 1x1 project), ReLU6; "
                         "small: width 0.25, at most 2 blocks per stage"),
    "mobilenet_v3_small": Arch(mobilenet_v3_small, _image(64), _image(224),
                               "MobileNetV3-Small: 3x3/5x5 depthwise blocks, hardswish, squeeze-excite with "
                               "hardsigmoid; small: width 0.5, 9 of the 11 blocks, classifier hidden 128"),
    "efficientnet_b0": Arch(efficientnet_b0, _image(64), _image(224),
                            "EfficientNet-B0: MBConv with SiLU and squeeze-excite (sigmoid), 3x3/5x5 depthwise; "
                            "small: width 0.25, stage depths [1,2,1,2,1,2,1]"),
    "shufflenet_v2_x1_0": Arch(shufflenet_v2_x1_0, _image(64), _image(224),
                               "ShuffleNetV2 1.0x: chunk into two halves, two-branch stride-2 units, cat, channel "
                               "shuffle (view/transpose/view); small: 0.5x widths, 2 units per stage, conv5 256"),
    "densenet121": Arch(densenet121, _image(64), _image(224),
                        "DenseNet-121: dense blocks (BN-ReLU-1x1, BN-ReLU-3x3, concat of all earlier features), "
                        "transitions with avg pool; small: growth 8, blocks (2,3,4,2)"),
    "regnet_y_400mf": Arch(regnet_y_400mf, _image(64), _image(224),
                           "RegNetY-400MF: Y blocks (1x1, grouped 3x3 with group width 8, SE, 1x1, projection "
                           "shortcut); small: widths 16-128, depths [1,2,2,1]"),
    "convnext_tiny": Arch(convnext_tiny, _image(64), _image(224),
                          "ConvNeXt-T: 4x4/4 patchify stem, depthwise 7x7, LayerNorm over channels via permute, "
                          "Linear-GELU-Linear, layer scale, 2x2/2 downsampling; small: dims 12-96, depths [1,1,2,1]"),
    "mnasnet1_0": Arch(mnasnet1_0, _image(64), _image(224),
                       "MnasNet 1.0: separable stem, inverted residuals with 3x3/5x5 depthwise, ReLU; small: "
                       "alpha 0.25, at most 2 blocks per stack"),
    "googlenet": Arch(googlenet, _image(64), _image(224),
                      "GoogLeNet: conv-BN-ReLU, four-branch inception modules (1x1, 3x3, 5x5, 3x3 maxpool + 1x1) "
                      "concatenated, maxpools with ceil_mode; small: width 0.25, inception 3a,3b,4a,5a"),
    "swin_t": Arch(swin_t, _image(64), _image(224),
                   "Swin-T: patch embedding, window attention with relative position bias, shifted windows "
                   "(torch.roll + mask), F.pad to whole windows, patch merging; small: embed 12, depths [2,2,1,1]"),
    "transformer_encoder_base": Arch(transformer_encoder, (1, 32, 64), (1, 128, 512),
                                     "post-norm Transformer encoder (nn.TransformerEncoderLayer layout) with "
                                     "scaled_dot_product_attention, sinusoidal positions; small: d 64, 4 heads, "
                                     "ff 256, 2 layers, seq 32"),
    "tts_variance_adaptor": Arch(tts_variance_adaptor, (1, 64, 50), (1, 256, 200),
                                 "FastSpeech 2 variance adaptor: duration, pitch, energy predictors (Conv1d, ReLU, "
                                 "LayerNorm over channels via transpose, Dropout) on [B, C, T], pitch embedding "
                                 "Conv1d; small: 64 channels, T 50"),
}
