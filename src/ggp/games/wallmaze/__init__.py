"""The wall maze: the rules and kernel (``rules``), the player (``player``), the page's view
(``view``) and ggp's rule sheet (``wallmaze.kif``)."""

from ...core.family import Family

FAMILY = Family(
    name="wallmaze",
    games={"wallmaze": (".rules:WallMaze", ())},
    agents={"wallmaze": ".player:WallMazeAgent"},
    view=".view:VIEW",
    planes=".planes:planes",
    titles={
        "wallmaze": ("Wall maze", "Race your marker through a one-lane maze to the other's start; both move at once."),
    },
)
