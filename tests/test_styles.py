"""One look per design (`idemsim.views.styles`): the same colour, marker and dashes in every figure, told apart in
greyscale and under the three common colour-vision deficiencies."""

from __future__ import annotations

import itertools

import pytest

from idemsim.model.designs import DESIGNS, SHIPPED
from idemsim.views import styles
from idemsim.views.figure import OUTCOME_COLOR

MACHADO = {
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
}
"""Machado, Oliveira and Fernandes (2009), "A physiologically-based model for simulation of color vision
deficiency", severity 1.0: each matrix maps linear sRGB as seen to linear sRGB as a dichromat sees it."""
VISIONS = ("normal", *MACHADO)
LIGHTNESS_STEP = 20.0
"""The CIE L* difference that tells two lines apart by lightness alone. A just-noticeable difference is about 1
(ΔE*ab 2.3) for large patches side by side; a 2 px line matched to its legend entry across the figure, printed in
greyscale or shown on a washed-out projector, needs many times that. 20 splits black to white into five levels
that a reader names without hesitation (black, dark, mid, light, white grey); closer than that, two designs must
differ in their dashes."""


def linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def lightness(colour: str, vision: str = "normal") -> float:
    """CIE L* of an sRGB ``#rrggbb`` colour, as seen with ``vision`` (Machado's simulation in linear RGB)."""
    rgb = [linear(int(colour[i:i + 2], 16)) for i in (1, 3, 5)]
    if vision != "normal":
        rgb = [min(1.0, max(0.0, sum(m * c for m, c in zip(row, rgb)))) for row in MACHADO[vision]]
    y = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
    f = y ** (1 / 3) if y > 216 / 24389 else (24389 / 27 * y + 16) / 116
    return 116 * f - 16


class TestTheColourScience:
    def test_lightness_runs_from_black_to_white(self):
        """Black is L* 0, white 100, sRGB's mid grey #777777 about 50, in every vision (greys stay greys)."""
        for vision in VISIONS:
            assert (round(lightness("#000000", vision)), round(lightness("#FFFFFF", vision)),
                    round(lightness("#777777", vision))) == (0, 100, 50)

    def test_a_dichromat_loses_the_red_green_difference(self):
        """Okabe–Ito's vermillion and green differ in hue for a trichromat, and a deuteranope sees them about
        equally light: what the styles must not rely on."""
        assert abs(lightness("#D55E00", "deuteranopia") - lightness("#009E73", "deuteranopia")) < 15


class TestDesignStyles:
    def test_every_shipped_design_has_its_ranks_style(self):
        """A design's style is its rank's, whatever the figure: naive black, same-tx blue, committed-first orange."""
        assert [styles.design_style(name) for name in SHIPPED] == [styles.BY_RANK[DESIGNS[n].rank] for n in SHIPPED]
        assert (styles.design_style("naive").colour, styles.design_style("same-tx").colour,
                styles.design_style("committed-first").colour) == ("#000000", "#0072B2", "#E69F00")

    @pytest.mark.parametrize("a, b", list(itertools.combinations(SHIPPED, 2)))
    def test_two_designs_differ_in_lightness_in_every_vision_or_in_their_dashes(self, a, b):
        """Two designs' colours differ by 20 L* or more in greyscale and under protanopia, deuteranopia and
        tritanopia, or their lines have different dashes."""
        sa, sb = styles.design_style(a), styles.design_style(b)
        closest = min(abs(lightness(sa.colour, v) - lightness(sb.colour, v)) for v in VISIONS)
        assert closest >= LIGHTNESS_STEP or sa.dashes != sb.dashes, (a, b, round(closest, 1))

    def test_every_design_has_its_own_marker(self):
        """Six designs, six markers, none of them an outcome's (a circle, a square, a diamond)."""
        markers = [styles.design_style(name).marker for name in SHIPPED]
        assert len(set(markers)) == len(SHIPPED) and not set(markers) & {"o", "s", "D"}

    def test_no_design_wears_an_outcomes_colour(self):
        """Green (an ok that holds), vermillion (broken) and reddish purple (unknown) mean an outcome; no design
        is drawn in one of them."""
        colours = {styles.design_style(name).colour for name in SHIPPED}
        assert colours & set(OUTCOME_COLOR.values()) == set()

    def test_a_users_design_is_neutral_and_two_of_them_still_differ(self):
        """A design registered by a user is drawn grey and thinner; two of them differ in marker and dashes."""
        from idemsim.model.designs.registry import register_design

        def handler(h):
            yield from ()

        try:
            register_design("mine-a", handler, summary="a test design")
            register_design("mine-b", handler, summary="another")
            a, b = styles.design_style("mine-a"), styles.design_style("mine-b")
            assert (a.colour, b.colour) == (styles.NEUTRAL, styles.NEUTRAL)
            assert a.marker != b.marker and a.dashes != b.dashes and a.width < styles.design_style("naive").width
        finally:
            DESIGNS.pop("mine-a", None)
            DESIGNS.pop("mine-b", None)
