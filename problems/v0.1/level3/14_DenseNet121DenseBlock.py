"""DenseNet dense block: each BN-ReLU-3x3 conv layer sees the concatenation of all previous feature maps."""
import torch
import torch.nn as nn

batch_size = 10
num_layers = 6
num_input_features = 32
growth_rate = 32
height, width = 224, 224

QUIRKS = ["batchnorm_train_stats"]


class Model(nn.Module):
    def __init__(self, num_layers: int, num_input_features: int, growth_rate: int):
        super().__init__()
        self.layers = nn.ModuleList(
            [self._make_layer(num_input_features + i * growth_rate, growth_rate) for i in range(num_layers)])

    def _make_layer(self, in_features: int, growth_rate: int):
        return nn.Sequential(
            nn.BatchNorm2d(in_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_features, growth_rate, kernel_size=3, padding=1, bias=False),
            nn.Dropout(0.0),  # p=0: identity even in training mode
        )

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            new_feature = layer(x)
            features.append(new_feature)
            x = torch.cat(features, 1)
        return x


def get_inputs():
    return [torch.rand(batch_size, num_input_features, height, width)]


def get_init_inputs():
    return [num_layers, num_input_features, growth_rate]
