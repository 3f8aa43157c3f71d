"""Residual policy-value networks for chess and gomoku (torch).

Both games share one trunk: a 3x3 stem and `blocks` residual blocks of `channels`.

Value head: WDL, a 3-way softmax (win, draw, loss for the side to move), value = W - L.
Chosen over a scalar tanh because draws are a large share of chess results (and of
small gomoku boards): a WDL head learns "drawish" apart from "unclear", the UCI
adapter can print `wdl` directly, and cross-entropy on a one-hot result trains more
stably than MSE on a tanh.

Chess policy (see codec_chess): a from head [B, 64] (1x1 convolution) and a to head
[B, 64, 73].  Destinations are scored by attention between squares, as lc0 does:
logit(f, t) = <q_f, k_t> / sqrt(d) for the 64 squares, plus a linear map of the
from-square's features to the 9 under-promotion slots.  The factoring is exact: any
legal move has its own (from, slot) pair.

Opponent-reply head (gomoku, NetConfig.reply_head): a second policy head over the cells
that predicts the opponent's answer to the move about to be played, an auxiliary target
that shapes the trunk (KataGo).  `forward(planes)` leaves it out (play, ONNX export);
training asks for it with `forward(planes, reply=True)`.

Gomoku: fully convolutional.  The on-board mask (input plane 4) is multiplied into
every activation, so padded cells stay zero and a board padded into a larger batch
computes exactly what it computes alone (training pads mixed sizes; the ONNX exports, fed
one board size at a time, skip the mask: UnpaddedBoards).  Policy: a 1x1 convolution to one logit per
cell.  Value: masked mean and max pooling over on-board cells (plus the mean scaled by
board size, as KataGo does) so one set of weights plays any board from 5x5 to 26x26.
Line planes (NetConfig.line_features, "res6x32-lines"): fixed, untrained planes computed
from the stones in front of the stem (LineFeatures).
"""
from __future__ import annotations

import importlib
import math

import torch
from torch import nn
from torch.nn import functional as F

from engine.games.gomoku.codec import MASK_PLANE
from engine.nn.codecs import get_codec
from engine.nn.spec import NetConfig, parse_net

__all__ = ["ChessNet", "GomokuNet", "LineFeatures", "UnpaddedBoards", "build_model", "deepen", "unpadded",
           "widen_input", "with_line_features", "with_reply_head", "MASK_PLANE"]



def _conv_bn(cin: int, cout: int, kernel: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=False),
                         nn.BatchNorm2d(cout))


class ResBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.a = _conv_bn(channels, channels, 3)
        self.b = _conv_bn(channels, channels, 3)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        y = F.relu(self.a(x))
        y = y if mask is None else y * mask
        x = F.relu(x + self.b(y))
        return x if mask is None else x * mask


def _line_kernels() -> torch.Tensor:
    """[4, 5, 5]: the five cells centred on a cell along a row, a column and both diagonals
    (each its own mirror image, so the same kernel sums a line and spreads it back)."""
    kernels = torch.zeros(4, 5, 5)
    kernels[0, 2, :] = 1.0
    kernels[1, :, 2] = 1.0
    kernels[2] = torch.eye(5)
    kernels[3] = torch.eye(5).flip(1)
    return kernels


class LineFeatures(nn.Module):
    """planes [B, 9, H, W] -> the line planes [B, 6, H, W] (engine/games/gomoku/lines.py says
    what they are; the same numbers as its line_planes), fixed: nothing here is trained or
    saved.  Why: a res6x32 trunk sees 13x13 cells and spends its little width finding these
    shapes, and a trained network gets them with zero weights on them (with_line_features)."""

    window: torch.Tensor
    window_bias: torch.Tensor
    spread: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        lines = _line_kernels()
        # (own, opponent, on board) -> per colour and direction: stones - 3 x other colour's
        # + 3 x cells on the board - 16, which is k - 1 on an open line of k stones and <= 0
        # on any other line of five, so relu() leaves the stones of open lines, less one.
        window = torch.zeros(8, 3, 5, 5)
        for colour in range(2):
            for d in range(4):
                window[4 * colour + d, colour] = lines[d]
                window[4 * colour + d, 1 - colour] = -3.0 * lines[d]
                window[4 * colour + d, 2] = 3.0 * lines[d]
        self.register_buffer("window", window, persistent=False)
        self.register_buffer("window_bias", torch.full((8,), -16.0), persistent=False)
        # each (j, colour) group of four directions spread back over the line's cells and summed
        self.register_buffer("spread", 0.25 * lines.unsqueeze(0).repeat(6, 1, 1, 1), persistent=False)

    def forward(self, planes: torch.Tensor) -> torch.Tensor:
        stones = torch.cat([planes[:, 0:2], planes[:, MASK_PLANE:MASK_PLANE + 1]], dim=1)
        open_stones = F.relu(F.conv2d(stones, self.window, self.window_bias, padding=2))
        at_least = torch.cat([torch.clamp(open_stones - j, 0.0, 1.0) for j in range(3)], dim=1)
        return F.conv2d(at_least, self.spread, padding=2, groups=6)


class Trunk(nn.Module):
    """planes [B, in, H, W] and mask [B, 1, H, W] -> features [B, C, H, W] (zero off the mask).
    mask None: every cell is on the board (nothing padded), so there is nothing to zero.
    With line_features the stem reads the line planes after the codec's."""

    def __init__(self, config: NetConfig):
        super().__init__()
        lines = get_codec(config.game).line_planes if config.line_features else 0
        self.stem = _conv_bn(config.in_planes + lines, config.channels, 3)
        self.blocks = nn.ModuleList(ResBlock(config.channels) for _ in range(config.blocks))

    def forward(self, planes: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        x = F.relu(self.stem(planes))
        x = x if mask is None else x * mask
        for block in self.blocks:
            x = block(x, mask)
        return x


class ChessNet(nn.Module):
    """planes [B, 32, 8, 8] -> (from logits [B, 64], to logits [B, 64, 73], wdl logits [B, 3])."""

    def __init__(self, config: NetConfig):
        super().__init__()
        if config.reply_head or config.line_features:
            raise ValueError("the opponent-reply head and the line planes are gomoku's only")
        self.config = config
        c, p, v = config.channels, config.policy_channels, config.value_channels
        self.trunk = Trunk(config)
        self.from_head = nn.Sequential(_conv_bn(c, p, 1), nn.ReLU(), nn.Conv2d(p, 1, 1))
        self.embed = nn.Sequential(_conv_bn(c, p, 1), nn.ReLU())
        self.query = nn.Conv2d(p, p, 1)
        self.key = nn.Conv2d(p, p, 1)
        self.under = nn.Conv2d(p, 9, 1)
        self.scale = 1.0 / math.sqrt(p)
        self.value_conv = nn.Sequential(_conv_bn(c, v, 1), nn.ReLU())
        self.value_fc = nn.Sequential(nn.Linear(v * 64, config.value_hidden), nn.ReLU(),
                                      nn.Linear(config.value_hidden, 3))

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = self.trunk(planes, None)  # every square is on the board: nothing to mask
        b = x.shape[0]
        from_logits = self.from_head(x).reshape(b, 64)
        e = self.embed(x)
        q = self.query(e).flatten(2).transpose(1, 2)            # [B, 64, p]
        k = self.key(e).flatten(2)                              # [B, p, 64]
        to_squares = torch.bmm(q, k) * self.scale             # [B, 64 from, 64 to]
        under = self.under(e).flatten(2).transpose(1, 2)        # [B, 64 from, 9]
        to_logits = torch.cat([to_squares, under], dim=2)
        wdl = self.value_fc(self.value_conv(x).flatten(1))
        return from_logits, to_logits, wdl


class GomokuNet(nn.Module):
    """planes [B, 9, H, W] -> (policy logits [B, H, W], wdl logits [B, 3]); any H, W.
    With line_features the planes may come with the line planes appended ([B, 15, H, W]: the
    ONNX export reads them so, engine/games/gomoku/lines.py computes them outside the graph)."""

    def __init__(self, config: NetConfig):
        super().__init__()
        self.config = config
        c, v = config.channels, config.value_channels
        self.lines = LineFeatures() if config.line_features else None
        self.trunk = Trunk(config)
        self.policy = nn.Sequential(_conv_bn(c, config.policy_channels, 1), nn.ReLU(),
                                    nn.Conv2d(config.policy_channels, 1, 1))
        if config.reply_head:
            self.reply = nn.Sequential(_conv_bn(c, config.policy_channels, 1), nn.ReLU(),
                                       nn.Conv2d(config.policy_channels, 1, 1))
        self.value_conv = nn.Sequential(_conv_bn(c, v, 1), nn.ReLU())
        self.value_fc = nn.Sequential(nn.Linear(3 * v, config.value_hidden), nn.ReLU(),
                                      nn.Linear(config.value_hidden, 3))

    def forward(self, planes: torch.Tensor, reply: bool = False,
                padded: bool = True) -> tuple[torch.Tensor, ...]:
        """(policy, wdl), or with `reply` (policy, wdl, reply logits [B, H, W]).
        padded False: the caller promises every board fills the planes (no padding), so the
        mask multiplications, identities there, are left out (UnpaddedBoards)."""
        mask = planes[:, MASK_PLANE:MASK_PLANE + 1]
        if self.lines is not None and planes.shape[1] == self.config.in_planes:
            planes = torch.cat([planes, self.lines(planes)], dim=1)   # else the caller appended them
        x = self.trunk(planes, mask if padded else None)
        policy = self.policy(x)[:, 0]
        policy = policy * mask[:, 0] if padded else policy
        v = self.value_conv(x)
        v = v * mask if padded else v
        area = mask.sum(dim=(2, 3))                              # [B, 1]
        mean = v.sum(dim=(2, 3)) / area
        # Activations are >= 0 after ReLU and 0 off the board, so a plain max is masked.
        peak = v.amax(dim=(2, 3))
        scaled = mean * (torch.sqrt(area) - 14.0) / 10.0
        wdl = self.value_fc(torch.cat([mean, scaled, peak], dim=1))
        if reply:
            return policy, wdl, self.reply(x)[:, 0] * mask[:, 0]
        return policy, wdl


class UnpaddedBoards(nn.Module):
    """A gomoku network for batches of boards that fill the planes, as the evaluator sends
    them (it batches one game, a board size and rule, at a time).  The on-board mask multiplications are
    identities there and cost about a sixth of an int8 evaluation on the CPU (ONNX Runtime
    profile: QLinearMul and its transposes), so the ONNX exports leave them out."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.net(planes, padded=False)


def unpadded(model: nn.Module) -> nn.Module:
    """`model` for unpadded batches: UnpaddedBoards around a gomoku network; chess masks nothing."""
    return UnpaddedBoards(model) if isinstance(model, GomokuNet) else model


def build_model(config: NetConfig | str, game: str | None = None) -> nn.Module:
    """A fresh (randomly initialised) network; `config` is a NetConfig or a name like "res6x64".
    The stem reads the codec's rule planes with weight 0: a network trained only on rules that
    never set a plane gets no gradient there, so a random weight would stay an untrained bias
    on every cell once a user picks a rule that sets it (gomoku-loop11's exactly-five plane).
    Zero is still trainable: the first data that sets the plane moves it."""
    if isinstance(config, str):
        if game is None:
            raise ValueError("build_model(name) needs the game")
        config = parse_net(config, game)
    codec = get_codec(config.game)
    module, _, name = codec.network.partition(":")
    model = getattr(importlib.import_module(module), name)(config)
    rule_planes = [plane for plane in codec.rule_planes if plane < config.in_planes]
    if rule_planes:
        with torch.no_grad():
            model.trunk.stem[0].weight[:, rule_planes] = 0.0
    return model.eval()


def with_reply_head(model: nn.Module) -> nn.Module:
    """`model` with an opponent-reply head (a fresh one; the rest of the weights kept), so a
    network trained without it can be fine-tuned with the auxiliary target."""
    config: NetConfig = model.config  # type: ignore[assignment]
    if config.reply_head:
        return model
    from dataclasses import replace
    headed = build_model(replace(config, reply_head=True))
    missing, unexpected = headed.load_state_dict(model.state_dict(), strict=False)
    assert not unexpected and all(name.startswith("reply.") for name in missing)
    return headed.train(model.training)


def widen_input(model: nn.Module, planes: int) -> nn.Module:
    """`model` made to read `planes` input planes (a network of an older codec version,
    to fine-tune under the current one): the stem's weights for the added planes start
    at zero, so the wider network computes exactly what the old one did."""
    config: NetConfig = model.config  # type: ignore[assignment]
    if planes == config.in_planes:
        return model
    if planes < config.in_planes:
        raise ValueError(f"cannot narrow a network from {config.in_planes} to {planes} input planes")
    from dataclasses import replace
    if config.line_features:
        raise ValueError("a network with line planes reads the current codec's planes already")
    return _stem_widened(model, replace(config, in_planes=planes))


def with_line_features(model: nn.Module) -> nn.Module:
    """`model` reading the line planes too (LineFeatures): the stem's weights on them start
    at zero, so the network computes exactly what it did, and fine-tuning learns to use them."""
    config: NetConfig = model.config  # type: ignore[assignment]
    if config.line_features:
        return model
    from dataclasses import replace
    return _stem_widened(model, replace(config, line_features=True))


def _stem_widened(model: nn.Module, config: NetConfig) -> nn.Module:
    """A network of `config`, whose stem reads more planes than `model`'s, with `model`'s
    weights and zero on the stem's added planes (which come after the old ones)."""
    wider = build_model(config)
    state = wider.state_dict()
    for name, tensor in model.state_dict().items():
        if state[name].shape == tensor.shape:
            state[name] = tensor.clone()
        else:                                   # the stem convolution: [C, in, k, k]
            state[name] = torch.zeros_like(state[name])
            state[name][:, :tensor.shape[1]] = tensor
    wider.load_state_dict(state)
    return wider.train(model.training)


def deepen(model: nn.Module, blocks: int) -> nn.Module:
    """`model` with `blocks` residual blocks instead of its own (the added ones after the
    trunk's last), so a larger network starts from a trained one (net2net).  Each added
    block's second batch norm starts at scale and shift zero: the block adds nothing to
    its input (already >= 0 and masked), so the deeper network computes exactly what the
    old one did and training grows into the new depth."""
    config: NetConfig = model.config  # type: ignore[assignment]
    if blocks == config.blocks:
        return model
    if blocks < config.blocks:
        raise ValueError(f"cannot make a network shallower ({config.blocks} to {blocks} blocks)")
    from dataclasses import replace
    deeper = build_model(replace(config, blocks=blocks))
    missing, unexpected = deeper.load_state_dict(model.state_dict(), strict=False)
    assert not unexpected and all(name.startswith("trunk.blocks.") for name in missing)
    trunk = deeper.trunk
    assert isinstance(trunk, Trunk)
    with torch.no_grad():
        for block in list(trunk.blocks)[config.blocks:]:
            assert isinstance(block, ResBlock)
            norm = block.b[1]
            assert isinstance(norm, nn.BatchNorm2d)
            norm.weight.zero_()
            norm.bias.zero_()
    return deeper.train(model.training)
