from sphinx_rag.search.lexical import stem, tokenize


def test_identifiers_are_split_and_kept_whole():
    assert tokenize("fit_transform") == ["fit_transform", "fit", "transform"]
    assert tokenize("RandomForestClassifier") == ["randomforestclassifier", "random", "forest", "classifier"]
    assert tokenize("HTMLParser") == ["htmlparser", "html", "parser"]


def test_case_accents_stopwords_and_dots():
    assert tokenize("The Café of sklearn.dummy") == ["cafe", "sklearn", "dummy"]
    assert tokenize("a b c") == []  # stop words and one-letter tokens go


def test_light_stemmer_only_touches_plurals():
    assert [stem(w) for w in ["strategies", "classes", "values", "analysis", "status", "fit"]] == [
        "strategy", "class", "value", "analysis", "status", "fit"]
    assert tokenize("classifiers") == tokenize("classifier")
