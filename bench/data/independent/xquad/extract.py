#!/usr/bin/env python3
"""Extract XQuAD's professional translations of SQuAD v1.1 paragraphs, aligned to the English ones.

usage: extract.py XQUAD_GIT_DIR [--out DIR]
  XQuAD (google-deepmind/xquad): xquad.<lang>.json, SQuAD format, 48 articles x 5 paragraphs of the
  SQuAD v1.1 development set, entirely parallel across languages. A paragraph is aligned across files
  by the id of its first question (the question ids are the same in every language; checked below).
Sources: the 240 English paragraphs (ids squad/<article>/<first question id>, so two paragraphs of
one article are different items). Variants: each paragraph's translation into ar, de, el, es, hi,
ro, ru, th, tr, vi, zh.
"""

import argparse
import json
import os
import subprocess

LANGS = ("ar", "de", "el", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")


def paragraphs(git_dir, lang):
    raw = subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:xquad.{lang}.json"], check=True, capture_output=True).stdout
    out = {}
    for article in json.loads(raw.decode("utf-8-sig"))["data"]:
        for p in article["paragraphs"]:
            out[f"squad/{article['title']}/{p['qas'][0]['id']}"] = (p["context"].strip(), [q["id"] for q in p["qas"]])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("xquad")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    en = paragraphs(a.xquad, "en")
    assert len(en) == 240, len(en)
    variants = []
    for lang in LANGS:
        tr = paragraphs(a.xquad, lang)
        # Same paragraphs, same questions, in the same order: the alignment is by id, not by position.
        assert tr.keys() == en.keys() and all(tr[k][1] == en[k][1] for k in en), lang
        variants += [{"source": k, "kind": "translation", "lang": lang, "text": tr[k][0]} for k in en]
    with open(os.path.join(a.out, "sources.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": k, "text": v[0]}, ensure_ascii=False) + "\n" for k, v in en.items())
    with open(os.path.join(a.out, "variants.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(v, ensure_ascii=False) + "\n" for v in variants)
    print(len(en), "sources;", len(variants), "variants")


if __name__ == "__main__":
    main()
