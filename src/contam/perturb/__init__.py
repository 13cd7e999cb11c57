"""Reference sets and variants with computed answers: symbolic templating, MC permutation, paraphrase, audit."""
