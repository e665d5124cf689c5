"""MobileNetV2: inverted bottleneck blocks (applied without skip connections), pooling, classifier."""
import torch
import torch.nn as nn

batch_size = 10
num_classes = 1000

QUIRKS = ["batchnorm_train_stats"]


class Model(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()

        def inverted_residual_block(inp, oup, stride, expand_ratio):
            # Applied as a plain Sequential: upstream computes a residual flag but never adds the skip.
            hidden_dim = int(inp * expand_ratio)
            layers = []
            if expand_ratio != 1:
                layers += [nn.Conv2d(inp, hidden_dim, 1, 1, 0, bias=False), nn.BatchNorm2d(hidden_dim),
                           nn.ReLU6(inplace=True)]
            layers += [
                nn.Conv2d(hidden_dim, hidden_dim, 3, stride, 1, groups=hidden_dim, bias=False),
                nn.BatchNorm2d(hidden_dim),
                nn.ReLU6(inplace=True),
                nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup),
            ]
            return nn.Sequential(*layers)

        input_channel = 32
        last_channel = 1280
        # (expand ratio t, output channels c, repeats n, first stride s)
        settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                    (6, 320, 1, 1)]
        features = [nn.Conv2d(3, input_channel, 3, 2, 1, bias=False), nn.BatchNorm2d(input_channel),
                    nn.ReLU6(inplace=True)]
        for t, c, n, s in settings:
            for i in range(n):
                stride = s if i == 0 else 1
                features.append(inverted_residual_block(input_channel, c, stride, expand_ratio=t))
                input_channel = c
        features += [nn.Conv2d(input_channel, last_channel, 1, 1, 0, bias=False), nn.BatchNorm2d(last_channel),
                     nn.ReLU6(inplace=True), nn.AdaptiveAvgPool2d((1, 1))]
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(
            nn.Dropout(0.0),  # p=0: identity even in training mode
            nn.Linear(last_channel, num_classes),
        )

        # Re-initialisation after construction (draws RNG after the default inits).
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        return self.classifier(x)


def get_inputs():
    return [torch.rand(batch_size, 3, 224, 224)]


def get_init_inputs():
    return [num_classes]
