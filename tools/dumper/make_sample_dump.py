#!/usr/bin/env python3
"""Make the sample dump in tests/data/sample (see its README).

Trains a small convolutional network on scikit-learn's 8x8 digits (the data
ship with scikit-learn; nothing is downloaded) with SGD in float32, and
records four steps with tools/dumper/fpkit_dump.py: the first step, one early, one
in the middle and the last, so that the gradients' magnitudes differ.
Everything is seeded and runs on one CPU thread with deterministic
algorithms, so a rerun with the same torch writes the same bytes.

    /usr/bin/python3 tools/dumper/make_sample_dump.py [OUTDIR]

OUTDIR defaults to tests/data/sample beside this script.  Needs torch and
scikit-learn (Debian: python3-torch python3-sklearn).  Prints what the
README states: the versions, the loss at each recorded step, the accuracy
on held-out digits, and each file's SHA-256.
"""

import hashlib
import os
import sys

import torch
from sklearn.datasets import load_digits

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
from fpkit_dump import FpkitDumper  # noqa: E402 (found beside this script)

SEED = 20240611
EPOCHS = 20
BATCH = 32
LR = 0.05
MOMENTUM = 0.9
TRAIN = 1500  # of the 1797 digits; the rest are held out
STEPS_PER_EPOCH = TRAIN // BATCH
RECORD = (0, 50, 300, EPOCHS * STEPS_PER_EPOCH - 1)


class DigitsNet(torch.nn.Module):
    """Two 3x3 convolutions and two linear layers: 1x8x8 -> 10 classes."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.relu1 = torch.nn.ReLU()
        self.conv2 = torch.nn.Conv2d(4, 8, 3, padding=1)
        self.relu2 = torch.nn.ReLU()
        self.pool = torch.nn.MaxPool2d(2)
        self.flatten = torch.nn.Flatten()
        self.fc1 = torch.nn.Linear(8 * 4 * 4, 32)
        self.relu3 = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(self.relu2(self.conv2(self.relu1(self.conv1(x)))))
        return self.fc2(self.relu3(self.fc1(self.flatten(x))))


def main(argv):
    outdir = argv[1] if len(argv) > 1 else os.path.join(HERE, "..", "tests", "data", "sample")
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(SEED)

    digits = load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16
    y = torch.tensor(digits.target, dtype=torch.int64)
    order = torch.randperm(len(y), generator=gen)
    x_train, y_train = x[order[:TRAIN]], y[order[:TRAIN]]
    x_test, y_test = x[order[TRAIN:]], y[order[TRAIN:]]

    model = DigitsNet()
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    # Every leaf but the flatten, whose output gradient is fc1's input gradient.
    layers = [n for n, m in model.named_modules()
              if n and not any(True for _ in m.children()) and n != "flatten"]
    losses = {}
    with FpkitDumper(model, outdir, steps=RECORD, activations=layers) as dumper:
        step = 0
        for _ in range(EPOCHS):
            perm = torch.randperm(TRAIN, generator=gen)
            for b in range(STEPS_PER_EPOCH):
                idx = perm[b * BATCH:(b + 1) * BATCH]
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x_train[idx]), y_train[idx])
                loss.backward()
                if dumper.before_step(step, loss):
                    losses[step] = loss.item()
                opt.step()
                dumper.after_step()
                step += 1

    with torch.no_grad():
        accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
    print("torch %s, scikit-learn digits %s, seed %d" % (torch.__version__, tuple(x.shape), SEED))
    print("%d epochs x %d steps of batch %d, SGD lr %g momentum %g"
          % (EPOCHS, STEPS_PER_EPOCH, BATCH, LR, MOMENTUM, ))
    for s in RECORD:
        print("step %d loss %.4f" % (s, losses[s]))
    print("held-out accuracy %.1f%% (%d digits)" % (100 * accuracy, len(y_test)))
    for s in RECORD:
        path = os.path.join(outdir, "step-%06d.safetensors" % s)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        print("%s  %s" % (digest, os.path.basename(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
