"""Swap2's even three-stone openings, by rule and board: what the brain proposes from.

Each entry is an opening's (dx, dy) of black, white, black about the centre, in one of its eight
symmetries, with the judge's win rate for white to move.  Made by `benchmarks/swap2_book.py`:
Rapfi (classical evaluation, one thread) searched 495 openings (white within three cells of
black's first stone, black's second within four) at 500,000 nodes, the 40 nearest to even again
at 8,000,000, and the nearest of those are kept here.  Node caps, not a clock, so the judgement
does not depend on the machine.  Boards and rules not here propose by search (swap2.propose).
"""
from __future__ import annotations

Opening = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]

EVEN_OPENINGS: dict[tuple[str, int], tuple[tuple[Opening, float], ...]] = {
    # freestyle 15x15: 495 shapes at 500000 nodes, 40 again at 8000000
    ('freestyle', 15): (
        (((0, 0), (-2, 0), (3, -2)), 0.501),
        (((0, 0), (-1, -1), (2, 2)), 0.504),
        (((0, 0), (-3, -2), (-3, -4)), 0.495),
        (((0, 0), (-1, 0), (4, 0)), 0.506),
        (((0, 0), (-1, 0), (3, -3)), 0.512),
        (((0, 0), (-2, -1), (-3, -4)), 0.516),
        (((0, 0), (-1, -1), (3, 3)), 0.471),
        (((0, 0), (-2, -1), (2, -4)), 0.470),
        (((0, 0), (-3, -3), (-4, -4)), 0.532),
        (((0, 0), (-2, -1), (-4, -3)), 0.465),
        (((0, 0), (-3, -1), (-4, -3)), 0.464),
        (((0, 0), (-2, -1), (3, -3)), 0.537),
        (((0, 0), (-1, -1), (-4, 2)), 0.539),
        (((0, 0), (-3, 0), (3, -3)), 0.459),
        (((0, 0), (-2, 0), (-4, -3)), 0.455),
        (((0, 0), (-1, -1), (2, 3)), 0.455),
    ),
    # standard 15x15: 495 shapes at 500000 nodes, 40 again at 8000000
    ('standard', 15): (
        (((0, 0), (-3, -2), (-3, -4)), 0.498),
        (((0, 0), (-1, -1), (-4, 2)), 0.498),
        (((0, 0), (-1, 0), (2, -4)), 0.502),
        (((0, 0), (-2, 0), (3, -3)), 0.496),
        (((0, 0), (-3, 0), (-2, -4)), 0.491),
        (((0, 0), (-2, 0), (1, -4)), 0.479),
        (((0, 0), (-3, -1), (-4, -3)), 0.466),
        (((0, 0), (-1, 0), (3, -4)), 0.542),
        (((0, 0), (-1, 0), (3, -3)), 0.458),
        (((0, 0), (-2, 0), (0, -4)), 0.456),
        (((0, 0), (-1, -1), (-1, 4)), 0.544),
        (((0, 0), (-1, -1), (2, 3)), 0.455),
    ),
}
