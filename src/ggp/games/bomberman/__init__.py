"""Bomberman (turn-based and simultaneous): the rules and kernel (``rules``), the player (``player``),
the page's view (``view``) and ggp's rule sheets (``*.kif``)."""

from ...core.family import Family

FAMILY = Family(
    name="bomberman",
    games={"bomberman": (".rules:Bomberman", (True,)), "bomberman2p": (".rules:Bomberman", (False,))},
    agents={"bomberman": ".player:BombermanAgent"},
    view=".view:VIEW",
    planes=".planes:planes",
    titles={
        "bomberman": ("Bomberman (turns)", "Take turns to walk and drop bombs; catch the other in the blast."),
        "bomberman2p": (
            "Bomberman (simultaneous)",
            "Both move at once; a bomb's fire sweeps its whole row and column.",
        ),
    },
)
