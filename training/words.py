"""Small word lists the question templates need: verbs (to turn a docstring's summary into
a question) and everyday synonyms of documentation words (to ask in the reader's words).

Hand-written for this purpose, general English and general programming vocabulary; no
word was chosen by looking at an evaluation question.
"""

from __future__ import annotations

__all__ = ["VERBS", "SYNONYMS", "third_person", "base_of_gerund", "base_of_third_person", "STOPWORDS"]

#: Verbs that start docstring summaries and section headings (base forms).
VERBS = set("""
accept access accumulate activate adapt add adjust aggregate align allocate allow alter analyse analyze annotate
append apply approximate archive arrange assert assign attach authenticate autocorrelate average avoid
bin bind blur bootstrap bound break broadcast build bundle cache calculate calibrate call cancel capture cast
center centre change check choose clean clear clip clone close cluster coarsen collapse collect color colour
combine commit compare compile complete compose compress compute concatenate configure connect construct
contain control convert convolve copy correct correlate count cover crop cross customize cut debug decode
decompose decorate deduplicate define delete denoise deprecate derive describe deserialize design destroy detect
determine diagonalize differentiate dilate disable discard discover dispatch display distribute divide document
download downsample draw drop dump duplicate edit eliminate embed emit enable encode encrypt end enforce enhance
ensure enter enumerate equalize erode escape estimate evaluate exclude execute expand expect explain export
expose extend extract factor factorize fail fetch fill filter find finish fit fix flag flatten flip fold follow
force forecast format forward freeze generate get give go group guess handle hash hide highlight hold identify
ignore implement import impute include increase increment index infer inherit initialize inject insert inspect
install instantiate integrate interpolate intersect invert invoke isolate iterate join keep label launch learn
limit link list load localize locate lock log look lookup loop make manage map mark mask match maximize measure
merge migrate minimize mirror mock model modify monitor mount move multiply name navigate negate nest normalize
notify obtain open optimize order output overlay override pack pad paginate parse partition pass patch pause
perform persist pick pin pipe place plot point poll pool populate post predict prefer prepare preprocess preserve
prevent print process produce profile project prompt propagate protect provide prune publish pull push put query
queue raise randomize rank read rebuild receive recognize reconstruct record recover reduce refactor refer
refresh register regress reject release reload remove rename render reorder repeat replace report represent
request require resample rescale reset reshape resize resolve restore restrict retrieve retry return reuse reverse
rotate round route run sample sanitize save scale scan schedule score search seed select send separate serialize
serve set shift show shuffle shut sign simplify simulate skip slice smooth solve sort specify split squeeze stack
standardize start stop store stream stretch strip subclass submit substitute subtract sum summarize supply support
suppress swap switch synchronize tabulate tag take terminate test threshold tile time tokenize toggle trace track
train transform translate transpose traverse trim truncate try tune turn undo unify union unpack unregister unwrap
update upgrade upload upsample use validate verify view visualize wait walk warn watch weight window wrap write yield
zip zoom
""".split())

_IRREGULAR_THIRD = {"do": "does", "go": "goes", "have": "has", "be": "is"}


def third_person(verb: str) -> str:
    """compute -> computes, apply -> applies, fetch -> fetches."""
    if verb in _IRREGULAR_THIRD:
        return _IRREGULAR_THIRD[verb]
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def base_of_third_person(word: str) -> str | None:
    """computes -> compute (only for a verb of ``VERBS``)."""
    w = word.lower()
    for cand in (w[:-3] + "y" if w.endswith("ies") else None, w[:-2] if w.endswith("es") else None,
                 w[:-1] if w.endswith("s") else None):
        if cand and cand in VERBS:
            return cand
    return None


def base_of_gerund(word: str) -> str | None:
    """installing -> install, creating -> create, running -> run (only for ``VERBS``)."""
    w = word.lower()
    if not w.endswith("ing") or len(w) < 5:
        return None
    stem = w[:-3]
    for cand in (stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else None):
        if cand and cand in VERBS:
            return cand
    return None


STOPWORDS = set("""
a an the and or but if of to in on at by for with from as is are was were be been being this that these those
it its into than then there their them they we you your i me my our can could should would will may might must
do does did how what which who whom why when where whether not no yes so such also only just more most other some
any each all both either neither one two very same own about over under after before between through during
using use used via per e.g i.e etc
""".split())

#: Everyday words for documentation words (a word or a two-word phrase -> alternatives).
SYNONYMS: dict[str, list[str]] = {
    "compute": ["calculate", "work out", "get"], "calculate": ["compute", "work out"],
    "computes": ["calculates", "works out"], "calculates": ["computes", "works out"],
    "remove": ["drop", "delete", "get rid of"], "removes": ["drops", "deletes"], "delete": ["remove", "erase"],
    "create": ["make", "build", "construct"], "creates": ["makes", "builds"], "construct": ["build", "make"],
    "return": ["give back", "get"], "returns": ["gives back", "gives"],
    "convert": ["turn", "transform", "change"], "converts": ["turns", "transforms"],
    "transform": ["convert", "change"], "apply": ["use", "run"], "applies": ["uses", "runs"],
    "estimate": ["approximate", "guess"], "estimates": ["approximates"], "fit": ["train", "learn"],
    "predict": ["forecast", "guess"], "missing": ["absent", "empty", "null"],
    "values": ["entries", "numbers"], "value": ["entry", "number"],
    "samples": ["rows", "observations", "data points"], "sample": ["row", "observation", "data point"],
    "features": ["columns", "variables"], "feature": ["column", "variable"],
    "number": ["count", "amount"], "large": ["big", "huge"], "small": ["tiny", "little"],
    "fast": ["quick"], "error": ["failure", "exception", "problem"], "errors": ["failures", "problems"],
    "raise": ["throw"], "raises": ["throws"], "exception": ["error"], "directory": ["folder"],
    "folder": ["directory"], "string": ["text"], "strings": ["texts"], "text": ["string"],
    "dictionary": ["dict", "mapping"], "mapping": ["dictionary", "dict"], "function": ["routine", "callable"],
    "parameter": ["argument", "option", "setting"], "parameters": ["arguments", "options", "settings"],
    "argument": ["parameter", "option"], "arguments": ["parameters", "options"], "option": ["setting", "flag"],
    "options": ["settings", "flags"], "configuration": ["config", "settings"], "default": ["standard", "fallback"],
    "maximum": ["max", "upper limit", "largest"], "minimum": ["min", "lowest", "smallest"],
    "average": ["mean"], "mean": ["average"], "median": ["middle value"], "variance": ["spread"],
    "distance": ["dissimilarity"], "similarity": ["closeness", "likeness"], "image": ["picture", "photo"],
    "images": ["pictures", "photos"], "graph": ["network"], "node": ["vertex"], "nodes": ["vertices"],
    "edge": ["link", "connection"], "edges": ["links", "connections"], "path": ["route"],
    "shortest": ["quickest", "minimal"], "matrix": ["2d array", "table"], "plot": ["chart", "draw"],
    "plots": ["charts", "draws"], "draw": ["plot", "render"], "draws": ["plots", "renders"],
    "show": ["display"], "display": ["show"], "color": ["colour"], "colors": ["colours"],
    "smooth": ["blur", "denoise"], "noise": ["grain", "jitter"], "filter": ["screen", "smooth"],
    "interpolate": ["fill in between"], "frequency": ["rate"], "signal": ["waveform"],
    "rotate": ["turn", "spin"], "resize": ["rescale"], "scale": ["resize", "normalize"],
    "normalize": ["standardize", "rescale"], "merge": ["combine", "join"], "join": ["merge", "combine"],
    "concatenate": ["stack", "append", "join"], "split": ["divide", "break up", "partition"],
    "sort": ["order", "rank"], "sorted": ["ordered"], "group": ["bucket", "cluster"], "count": ["tally"],
    "test": ["check", "verify"], "tests": ["checks"], "check": ["verify", "validate"], "checks": ["verifies"],
    "validate": ["check", "verify"], "validates": ["checks", "verifies"], "request": ["call", "query"],
    "requests": ["calls", "queries"], "response": ["reply", "answer"], "send": ["post", "transmit"],
    "sends": ["posts"], "download": ["fetch", "retrieve"], "fetch": ["download", "get"],
    "load": ["read", "open", "import"], "loads": ["reads", "opens"], "read": ["load", "open", "parse"],
    "reads": ["loads", "opens"], "write": ["save", "store", "dump"], "writes": ["saves", "stores"],
    "save": ["store", "write", "persist"], "store": ["save", "keep"], "stored": ["kept", "saved"],
    "print": ["output", "display"], "render": ["draw", "produce"], "renders": ["draws", "produces"],
    "template": ["layout"], "templates": ["layouts"], "variable": ["placeholder", "name"],
    "iterate": ["loop over", "go through"], "combine": ["merge", "join"], "compare": ["diff", "contrast"],
    "equal": ["same", "identical"], "identical": ["equal", "same"], "empty": ["blank"],
    "random": ["arbitrary"], "generate": ["produce", "create", "make"], "generates": ["produces", "makes"],
    "weight": ["importance"], "weights": ["importances"], "probability": ["likelihood", "chance"],
    "probabilities": ["likelihoods", "chances"], "label": ["tag"], "labels": ["tags"],
    "date": ["day"], "dates": ["days"], "timezone": ["time zone"], "duration": ["length of time", "period"],
    "timeout": ["time limit"], "connection": ["link", "socket"], "header": ["metadata"],
    "headers": ["metadata"], "url": ["address", "link"], "encode": ["serialize"], "decode": ["parse"],
    "serialize": ["dump", "encode"], "deserialize": ["load", "parse"], "schema": ["structure"],
    "field": ["attribute", "property"], "fields": ["attributes", "properties"],
    "attribute": ["property", "field"], "table": ["grid"], "column": ["field"], "columns": ["fields"],
    "row": ["record", "line"], "rows": ["records", "lines"], "dimension": ["axis"], "dimensions": ["axes"],
    "axis": ["dimension", "direction"], "shape": ["dimensions", "size"], "size": ["length", "dimensions"],
    "length": ["size"], "integer": ["whole number", "int"], "integers": ["whole numbers", "ints"],
    "install": ["set up"], "configure": ["set up", "customize"], "customize": ["tweak", "adjust", "change"],
    "change": ["modify", "alter", "adjust"], "modify": ["change", "alter"], "update": ["refresh", "change"],
    "skip": ["ignore", "bypass"], "ignore": ["skip", "disregard"], "stop": ["halt", "abort"],
    "start": ["begin", "launch"], "run": ["execute", "launch"], "execute": ["run"], "fail": ["break", "crash"],
    "fails": ["breaks", "crashes"], "warning": ["caution", "alert"], "deprecated": ["obsolete", "outdated"],
    "parallel": ["concurrently", "at the same time"], "cache": ["memoize", "remember"], "memory": ["ram"],
    "approximate": ["rough"], "exact": ["precise"], "threshold": ["cutoff", "limit"], "limit": ["cap", "bound"],
    "range": ["interval", "span"], "interval": ["range", "span"], "percentile": ["quantile"],
    "quantile": ["percentile"], "histogram": ["frequency plot", "distribution plot"],
    "correlation": ["relationship", "association"], "outlier": ["anomaly", "extreme value"],
    "outliers": ["anomalies", "extreme values"], "detect": ["find", "spot", "identify"],
    "detects": ["finds", "spots"], "find": ["locate", "search for", "look up"], "finds": ["locates"],
    "search": ["look up", "find"], "extract": ["pull out", "get"], "replace": ["substitute", "swap"],
    "trim": ["cut"], "strip": ["trim", "remove"], "pad": ["fill", "extend"], "fill": ["pad", "populate"],
    "mask": ["hide", "cover"], "nested": ["inner", "embedded"], "unique": ["distinct"],
    "duplicate": ["repeated"], "duplicates": ["repeats"], "copy": ["duplicate", "clone"],
    "reshape": ["change the shape of"], "flatten": ["collapse"], "transpose": ["swap the axes of"],
    "invert": ["reverse"], "reverse": ["invert", "flip"], "inverse": ["reciprocal"],
    "solve": ["find a solution to"], "minimize": ["find the minimum of", "optimize"],
    "optimize": ["minimize", "tune"], "integrate": ["find the integral of"], "derivative": ["gradient", "slope"],
    "gradient": ["derivative", "slope"], "coefficient": ["factor"], "coefficients": ["factors"],
    "decomposition": ["factorization"], "factorization": ["decomposition"], "sparse": ["mostly zero"],
    "convolution": ["filtering"], "peak": ["spike"], "peaks": ["spikes"], "segmentation": ["partitioning"],
    "contour": ["outline"], "contours": ["outlines"], "region": ["area", "zone"], "regions": ["areas", "zones"],
    "contrast": ["brightness range"], "denoise": ["clean"], "blur": ["smooth", "soften"],
    "warnings": ["alerts"], "instance": ["object"], "instances": ["objects"], "object": ["instance", "thing"],
    "objects": ["instances", "things"], "class": ["type"], "method": ["function"],
    "callback": ["hook", "handler"], "hook": ["callback", "handler"], "hooks": ["callbacks", "handlers"],
    "plugin": ["extension", "add-on"], "plugins": ["extensions", "add-ons"], "extension": ["plugin", "add-on"],
    "environment": ["setup", "context"], "context": ["environment", "scope"], "user": ["person"],
    "session": ["connection"], "cookie": ["session token"], "token": ["key"], "password": ["secret"],
    "authentication": ["login", "auth"], "proxy": ["relay"], "redirect": ["forward"],
    "progress": ["status"], "bar": ["meter"], "console": ["terminal"], "terminal": ["console", "shell"],
    "style": ["look", "format"], "format": ["layout", "style"], "output": ["result"], "result": ["output"],
    "results": ["outputs"], "input": ["data"], "dataset": ["data"], "data": ["dataset", "information"],
    "model": ["estimator"], "regression": ["curve fitting"], "statistics": ["stats"], "statistic": ["stat"],
    "distribution": ["spread"], "uniform": ["flat", "even"], "normal": ["gaussian"], "gaussian": ["normal"],
    "time": ["clock"], "series": ["sequence"], "trend": ["tendency"], "seasonal": ["periodic"],
    "lag": ["delay"], "confidence": ["certainty"], "significance": ["importance"],
    "hypothesis": ["assumption"], "independent": ["unrelated"], "correlated": ["related"],
}
