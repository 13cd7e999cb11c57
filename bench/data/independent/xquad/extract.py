#!/usr/bin/env python3
"""Extract XQuAD's professional translations of SQuAD v1.1 paragraphs, aligned to the English ones.

usage: extract.py XQUAD_GIT_DIR [--out DIR]
  XQuAD (google-deepmind/xquad): xquad.<lang>.json, SQuAD format, 48 articles x 5 paragraphs of the
  SQuAD v1.1 development set, entirely parallel across languages. A paragraph is aligned across files
  by the id of its first question (the question ids are the same in every language; checked below).
Sources: the 240 English paragraphs (ids squad/<article>/<first question id>, so two paragraphs of
one article are different items). Variants: each paragraph's translation into ar, de, el, es, hi,
ro, ru, th, tr, vi, zh.

Also written, to ../xquad_questions/: the 1,190 questions alone (ids squadq/<article>/<question id>),
English and translated: one-sentence items of another genre than XCOPA's.
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
            for q in p["qas"]:
                out[f"q/squad/{article['title']}/{q['id']}"] = (q["question"].strip(), [q["id"]])
    return out


def _q(qid):
    return "q/squad/" + qid[len("squadq/") :]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("xquad")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    both = paragraphs(a.xquad, "en")
    en = {k: v for k, v in both.items() if not k.startswith("q/")}
    questions = {"squadq/" + k[len("q/squad/") :]: v for k, v in both.items() if k.startswith("q/")}
    assert len(en) == 240 and len(questions) == 1190, (len(en), len(questions))
    variants, asked = [], []
    for lang in LANGS:
        tr = paragraphs(a.xquad, lang)
        # Same paragraphs, same questions, in the same order: the alignment is by id, not by position.
        assert all(tr[k][1] == en[k][1] for k in en) and all(_q(k) in tr for k in questions), lang
        variants += [{"source": k, "kind": "translation", "lang": lang, "text": tr[k][0]} for k in en]
        asked += [{"source": k, "kind": "translation", "lang": lang, "text": tr[_q(k)][0]} for k in questions]
    out_q = os.path.join(a.out, os.pardir, "xquad_questions")
    os.makedirs(out_q, exist_ok=True)
    with open(os.path.join(out_q, "sources.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": k, "text": v[0]}, ensure_ascii=False) + "\n" for k, v in questions.items())
    with open(os.path.join(out_q, "variants.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(v, ensure_ascii=False) + "\n" for v in asked)
    with open(os.path.join(a.out, "sources.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": k, "text": v[0]}, ensure_ascii=False) + "\n" for k, v in en.items())
    with open(os.path.join(a.out, "variants.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(v, ensure_ascii=False) + "\n" for v in variants)
    print(len(en), "paragraphs;", len(variants), "translations;", len(questions), "questions;", len(asked), "translated")


if __name__ == "__main__":
    main()
