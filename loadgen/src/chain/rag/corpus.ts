/**
 * The RAG hop's document corpus: a small, fixed set of documents about the topics the load generator asks about
 * (loadgen/src/load/prompts.ts), and a deterministic retriever over it. A query's topic is the one it names last (the
 * question itself comes after any "given what you know about …" nesting and earlier turns); the documents relevant to
 * it are that topic's. Retrieval finds each relevant document with a probability that grows with k and falls with a
 * per-query difficulty, so it misses some, and fills the rest of the k slots with near misses: the recall it reports
 * is the true share of the relevant documents it returned. loadgen/scenarios/data/rag-questions.jsonl grades it.
 */
import { hashFraction } from '../../shared/random';
import { fillerText } from '../../shared/text';

export interface CorpusTopic {
  slug: string;
  /** As the load generator's prompts name it. */
  name: string;
  /** Lower-case phrases that identify the topic in a query (multi-word, so filler text never matches one). */
  aliases: string[];
  /** One document per fact. */
  facts: string[];
}

export interface CorpusDocument {
  id: string;
  topic?: string;
  title: string;
  text: string;
}

export const CORPUS_TOPICS: CorpusTopic[] = [
  {
    slug: 'kv-cache',
    name: 'the KV cache',
    aliases: ['kv cache', 'kv-cache', 'key-value cache'],
    facts: [
      'The KV cache keeps the attention keys and values of every running sequence in fixed-size blocks of GPU memory.',
      'When the KV cache is full the scheduler preempts the newest sequence and recomputes it later, which adds latency.',
      'KV cache usage grows with prompt length plus generated tokens; long prompts leave room for fewer concurrent sequences.',
      'Quantising the KV cache to FP8 roughly doubles the number of tokens that fit at a small accuracy cost.',
    ],
  },
  {
    slug: 'continuous-batching',
    name: 'continuous batching',
    aliases: ['continuous batching', 'in-flight batching', 'iteration-level batching'],
    facts: [
      'Continuous batching admits new sequences into the running batch at every engine step instead of waiting for a batch to drain.',
      'With continuous batching the decode step time grows with the batch size, so inter-token latency rises under load.',
      'The maximum number of sequences per batch bounds how much continuous batching can amortise each step.',
      'Continuous batching mixes prefill and decode work in one step; a long prefill delays every decoding sequence.',
    ],
  },
  {
    slug: 'prefix-caching',
    name: 'prefix caching',
    aliases: ['prefix caching', 'prefix cache', 'automatic prefix caching'],
    facts: [
      'Prefix caching reuses the KV blocks of a shared prompt prefix, such as a system prompt, across requests.',
      'A prefix cache hit skips the prefill of the cached tokens, which cuts time to first token.',
      'Prefix caching evicts the least recently used prefixes when KV memory runs short, so hit rates fall under memory pressure.',
      'Templates that put variable text before the shared instructions defeat prefix caching.',
    ],
  },
  {
    slug: 'speculative-decoding',
    name: 'speculative decoding',
    aliases: ['speculative decoding', 'draft model', 'speculative sampling'],
    facts: [
      'Speculative decoding lets a small draft model propose several tokens that the target model verifies in one step.',
      'Speculative decoding helps at low batch sizes and can hurt throughput when the batch is already large.',
      'The acceptance rate of draft tokens decides how much speculative decoding saves; it drops on unusual text.',
      'Speculative decoding needs extra KV cache for the draft model and for the rejected tokens.',
    ],
  },
  {
    slug: 'tensor-parallelism',
    name: 'tensor parallelism',
    aliases: ['tensor parallelism', 'tensor parallel', 'tensor-parallel'],
    facts: [
      'Tensor parallelism splits every weight matrix across GPUs, so each layer needs an all-reduce between them.',
      'Tensor parallelism over NVLink costs little; over PCIe the all-reduce can dominate decode step time.',
      'Tensor parallelism lowers per-GPU memory for weights and leaves more room for the KV cache.',
      'A straggling GPU slows every step under tensor parallelism, because all shards wait for the slowest one.',
    ],
  },
  {
    slug: 'vector-index',
    name: 'the vector index',
    aliases: ['vector index', 'vector database', 'ann index'],
    facts: [
      'The vector index answers nearest-neighbour queries approximately; its recall depends on how many candidates it probes.',
      'Probing more lists or a larger HNSW ef in the vector index raises recall and query latency together.',
      'A vector index built on stale embeddings returns documents that no longer match the current model.',
      'Filtering a vector index by metadata after the search can return fewer than k results.',
    ],
  },
  {
    slug: 'tls-session-resumption',
    name: 'TLS session resumption',
    aliases: ['tls session resumption', 'session resumption', 'tls resumption'],
    facts: [
      'TLS session resumption skips the full handshake by reusing a session ticket or session id from an earlier connection.',
      'Without TLS session resumption every new connection pays a full handshake, including certificate verification.',
      'Session tickets for TLS session resumption must be shared between replicas behind one load balancer.',
      'A slow TLS handshake shows up as connect time on the client and before the first request byte on the server.',
    ],
  },
  {
    slug: 'tcp-retransmission',
    name: 'TCP retransmission',
    aliases: ['tcp retransmission', 'tcp retransmit', 'packet loss'],
    facts: [
      'A TCP retransmission after a lost SYN waits for the initial timeout, about one second on Linux.',
      'Lost data segments are retransmitted after a loss probe or a retransmission timeout, adding tens to hundreds of milliseconds.',
      'TCP retransmissions are counted per socket by the kernel and visible to the tcp_retransmit_skb tracepoint.',
      'Retransmissions on one hop inflate the client span of its caller while the server span stays fast.',
    ],
  },
  {
    slug: 'gpu-memory-fragmentation',
    name: 'GPU memory fragmentation',
    aliases: ['gpu memory fragmentation', 'memory fragmentation', 'gpu memory'],
    facts: [
      'GPU memory fragmentation leaves free memory in pieces too small for a large allocation, which then fails with out of memory.',
      'CUDA allocation failures report CUDA_ERROR_OUT_OF_MEMORY even when the total free memory looks sufficient.',
      'Paged KV blocks avoid most GPU memory fragmentation because every block has the same size.',
      'An inference server that runs out of GPU memory can fall back to a smaller model or reject the request.',
    ],
  },
  {
    slug: 'retrieval-pipeline',
    name: 'the retrieval pipeline',
    aliases: ['retrieval pipeline', 'rag pipeline', 'retrieval-augmented generation'],
    facts: [
      'The retrieval pipeline embeds the query, checks the semantic cache, and searches the vector index on a miss.',
      'A semantic cache hit in the retrieval pipeline answers in about a millisecond and skips the vector search.',
      'The retrieval pipeline adds the top-k documents to the prompt, so a larger k means more prefill tokens.',
      'Recall of the retrieval pipeline is the share of the relevant documents that reach the prompt.',
    ],
  },
];

/** Documents about none of the topics: what a query without a known topic gets, and the far misses. */
const GENERAL = [
  'Hopscope traces one request through every hop and ranks the hops by how much they explain its delay.',
  'Service level objectives for chat usually bound time to first token and end-to-end latency separately.',
  'Load tests should mark their traffic in W3C baggage so that traces and metrics can be filtered by run.',
  'Head sampling decides whether a trace is kept when its first span starts; errors can still be kept afterwards.',
  'An on-call runbook should link every alert to the dashboard view of the time it fired.',
  'Kubernetes pods of one deployment share a name prefix and differ in a generated suffix.',
  'Prometheus histograms aggregate across replicas before a quantile is computed.',
  'A postmortem records the time range, the affected requests and the evidence for the root cause.',
];

const docText = (fact: string, seed: number): string => `${fact} ${fillerText(40, seed)}`;

export const CORPUS: CorpusDocument[] = [
  ...CORPUS_TOPICS.flatMap((t) =>
    t.facts.map((fact, i) => ({
      id: `doc-${t.slug}-${i + 1}`,
      topic: t.slug,
      title: `${t.name}: ${i + 1}`,
      text: docText(fact, hashFraction(`${t.slug}${i}`) * 1e6),
    }))
  ),
  ...GENERAL.map((fact, i) => ({
    id: `doc-general-${i + 1}`,
    title: `general: ${i + 1}`,
    text: docText(fact, 7000 + i),
  })),
];

const byId = new Map(CORPUS.map((d) => [d.id, d]));
export const documentById = (id: string): CorpusDocument | undefined => byId.get(id);

/** The topics a query names, the one it names last first. */
export function queryTopics(query: string): CorpusTopic[] {
  const q = query.toLowerCase();
  const at = CORPUS_TOPICS.map((t) => ({ t, last: Math.max(...t.aliases.map((a) => q.lastIndexOf(a))) })).filter(
    (x) => x.last >= 0
  );
  return at.sort((a, b) => b.last - a.last).map((x) => x.t);
}

/** The documents relevant to a query: those of its main topic (none when it names no topic). */
export function relevantDocuments(query: string): string[] {
  const main = queryTopics(query)[0];
  return main ? CORPUS.filter((d) => d.topic === main.slug).map((d) => d.id) : [];
}

export interface Retrieved {
  id: string;
  score: number;
  text: string;
}
export interface Retrieval {
  documents: Retrieved[];
  /** Share of the relevant documents returned; null when the query names no topic (nothing to be relevant). */
  recall: number | null;
  topic?: string;
}

/** Top-k retrieval, deterministic per (query, k). */
export function retrieve(query: string, k: number): Retrieval {
  const topics = queryTopics(query);
  const relevant = relevantDocuments(query);
  const f = hashFraction(query);
  // More candidates probed → better recall; a per-query difficulty keeps it below 1 (as an ANN index behaves).
  const p = Math.min(1, (0.45 + 0.5 * (1 - f * 0.6)) * (1 - Math.exp(-k / 3)));
  const found = relevant.filter((id) => hashFraction(`${query}#${id}`) < p).slice(0, k);
  const taken = new Set(found);
  // Near misses: the other topics the query names, then general documents, then the rest, each in a per-query order.
  const order = (ids: string[]) =>
    [...ids].sort((a, b) => hashFraction(`${query}~${a}`) - hashFraction(`${query}~${b}`));
  const near = topics.slice(1).flatMap((t) => order(CORPUS.filter((d) => d.topic === t.slug).map((d) => d.id)));
  const far = order(CORPUS.filter((d) => !d.topic).map((d) => d.id));
  const rest = order(
    CORPUS.filter((d) => d.topic && !relevant.includes(d.id) && !near.includes(d.id)).map((d) => d.id)
  );
  const fill = [...near, ...far, ...rest]
    .filter((id) => !taken.has(id) && !relevant.includes(id))
    .slice(0, Math.max(0, k - found.length));
  const ids = [...found, ...fill];
  const documents = ids.map((id, i) => ({
    id,
    score: Number((0.95 - i * 0.04 - f * 0.05 - (i >= found.length ? 0.2 : 0)).toFixed(3)),
    text: byId.get(id)!.text,
  }));
  return {
    documents,
    recall: relevant.length ? Number((found.length / relevant.length).toFixed(3)) : null,
    topic: topics[0]?.slug,
  };
}
