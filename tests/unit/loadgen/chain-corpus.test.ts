import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PromptLine } from '../../../contract/scenario';
import { CORPUS, CORPUS_TOPICS, queryTopics, relevantDocuments, retrieve } from '../../../loadgen/src/chain/rag/corpus';
import { synthPrompt } from '../../../loadgen/src/load/prompts';

const DATASET = join(import.meta.dirname, '../../../loadgen/scenarios/data/rag-questions.jsonl');

describe('the RAG corpus and its retrieval', () => {
  it('names every document once; every topic the load generator asks about has documents', () => {
    assert.equal(new Set(CORPUS.map((d) => d.id)).size, CORPUS.length);
    // The synthesiser's TOPICS (not exported): every topic a synthesised question names is one of the corpus's.
    const named = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const p = synthPrompt(7, i, { multiTurnP: 0 });
      const t = queryTopics(p.messages[p.messages.length - 1].content)[0];
      assert.ok(t, `no corpus topic in "${p.messages[0].content.slice(0, 80)}"`);
      named.add(t.slug);
    }
    assert.equal(named.size, CORPUS_TOPICS.length, 'every corpus topic is asked about');
  });

  it('the main topic is the one named last (the question after a "given what you know about …" nesting)', () => {
    const q =
      'Given what you know about TCP retransmission, and assuming it depends on the vector index: How does prefix caching affect latency?';
    assert.deepEqual(
      queryTopics(q).map((t) => t.slug),
      ['prefix-caching', 'vector-index', 'tcp-retransmission']
    );
    assert.deepEqual(relevantDocuments(q), [
      'doc-prefix-caching-1',
      'doc-prefix-caching-2',
      'doc-prefix-caching-3',
      'doc-prefix-caching-4',
    ]);
    assert.deepEqual(relevantDocuments('What is the weather like?'), []);
  });

  it('returns k documents, deterministically; its recall is the true share of the relevant ones; it misses some', () => {
    let found = 0,
      relevant = 0;
    const recalls: number[] = [];
    for (let i = 0; i < 200; i++) {
      const q = synthPrompt(3, i, { multiTurnP: 0 }).messages[0].content;
      const r = retrieve(q, 5);
      assert.deepEqual(r, retrieve(q, 5), 'deterministic');
      assert.equal(r.documents.length, 5);
      assert.equal(new Set(r.documents.map((d) => d.id)).size, 5);
      const rel = relevantDocuments(q);
      const hit = r.documents.filter((d) => rel.includes(d.id)).length;
      assert.equal(r.recall, Number((hit / rel.length).toFixed(3)));
      // Relevant documents rank first.
      assert.deepEqual(
        r.documents.slice(0, hit).map((d) => rel.includes(d.id)),
        Array(hit).fill(true)
      );
      found += hit;
      relevant += rel.length;
      recalls.push(r.recall!);
    }
    const mean = found / relevant;
    assert.ok(mean > 0.45 && mean < 0.9, `mean recall@5 ${mean}`);
    assert.ok(recalls.some((r) => r < 1) && recalls.some((r) => r === 1), 'some queries miss documents, some find all');
    const q = 'Why would the KV cache fail under load?';
    assert.ok(retrieve(q, 20).recall! >= retrieve(q, 2).recall!, 'a larger k never finds less');
  });

  it('the shipped dataset (loadgen/scenarios/data/rag-questions.jsonl) is valid PromptLines whose expected documents are the relevant ones', () => {
    const lines = readFileSync(DATASET, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => PromptLine.parse(JSON.parse(l)));
    assert.ok(lines.length >= 40, `${lines.length} questions`);
    const topics = new Set<string>();
    for (const l of lines) {
      assert.equal(l.route, 'rag');
      const q = l.messages![l.messages!.length - 1].content;
      assert.deepEqual(l.expected?.documents, relevantDocuments(q), q);
      topics.add(queryTopics(q)[0].slug);
    }
    assert.equal(topics.size, CORPUS_TOPICS.length, 'every topic has questions');
    const mean = lines.reduce((n, l) => n + retrieve(l.messages![0].content, 5).recall!, 0) / lines.length;
    assert.ok(mean > 0.4 && mean < 0.95, `mean recall@5 on the dataset ${mean}`);
  });
});
