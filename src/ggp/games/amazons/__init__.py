"""Amazons (10x10 and 8x8): the rules and kernel (``rules``), the player (``player``, with the
solved endgame in ``endgame``), the page's view (``view``) and ggp's rule sheets (``*.kif``)."""

from ...core.family import Family

FAMILY = Family(
    name="amazons",
    games={"amazons_10x10": (".rules:Amazons", (10,)), "amazons_8x8": (".rules:Amazons", (8,))},
    agents={"amazons": ".player:AmazonsAgent"},
    view=".view:VIEW",
    planes=".planes:planes",
    titles={
        "amazons_10x10": (
            "Amazons",
            "Move a queen, then shoot an arrow that walls off a square; the last to move wins.",
        ),
        "amazons_8x8": ("Amazons 8x8", "Amazons on a smaller board: quicker games, the same wall-building fight."),
    },
)
