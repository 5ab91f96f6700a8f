// The reader's topological sort. ONNX requires a graph's nodes in topological order, but files
// that break it exist (an fp16 converter appends the Casts it inserts at the end of the node
// list) and ONNX Runtime sorts them, so the reader does too. The sort is stable: among the
// nodes ready to run, the one earliest in the file comes first, so a sorted file keeps its
// order exactly (and is written back byte-identical).
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "onemodel/io/onnx_reader_internal.h"

namespace om::onnx::detail {
namespace {

using graph::Graph;
using graph::Node;

std::string label(const Node& n, size_t file_index) {
  std::string s = msg("node[", file_index, "] ", n.op_type);
  if (!n.name.empty()) s += msg(" '", n.name, "'");
  else if (!n.outputs.empty()) s += msg(" producing '", n.outputs[0], "'");
  return s;
}

// The cycle through `start` (a node that never became ready): following, from each node, an
// input whose producer is also unsorted must come back to a node already on the path, because
// every unsorted node has such an input.
std::vector<size_t> find_cycle(size_t start, const std::vector<std::vector<size_t>>& deps, const std::vector<char>& sorted) {
  std::vector<size_t> path;
  std::unordered_map<size_t, size_t> pos;  // node -> index in path
  size_t at = start;
  while (!pos.count(at)) {
    pos[at] = path.size();
    path.push_back(at);
    size_t next = at;
    for (size_t d : deps[at])
      if (!sorted[d]) { next = d; break; }
    at = next;
  }
  return std::vector<size_t>(path.begin() + long(pos[at]), path.end());
}

}  // namespace

Status sort_nodes(Graph& g, std::vector<size_t>* file_index) {
  const size_t n = g.nodes.size();
  file_index->resize(n);
  for (size_t i = 0; i < n; ++i) (*file_index)[i] = i;

  // Producers by value name. A value with two producers, or a node input defined nowhere, is
  // left for graph::verify to report with its own message: the sort only orders what it can.
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (const std::string& o : g.nodes[i].outputs)
      if (!o.empty() && !producer.emplace(o, i).second) return Status::ok();
  std::unordered_set<std::string> outer;  // graph inputs and initializers: defined before any node
  for (const auto& v : g.inputs) outer.insert(v.name);
  for (const auto& t : g.initializers) outer.insert(t.name);

  std::vector<std::vector<size_t>> deps(n), users(n);
  std::vector<size_t> pending(n, 0);
  bool in_order = true;
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& in : g.nodes[i].inputs) {
      if (in.empty() || outer.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end()) continue;
      const size_t p = it->second;
      deps[i].push_back(p);
      users[p].push_back(i);
      ++pending[i];
      if (p >= i) in_order = false;
    }
  }
  if (in_order) return Status::ok();

  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<size_t> order;
  order.reserve(n);
  std::vector<char> sorted(n, 0);
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    sorted[i] = 1;
    for (size_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != n) {
    size_t start = 0;
    while (sorted[start]) ++start;
    const std::vector<size_t> cycle = find_cycle(start, deps, sorted);
    std::string text;
    for (size_t c : cycle) text += label(g.nodes[c], c) + " -> ";
    text += label(g.nodes[cycle[0]], cycle[0]);
    return Status::error(ErrorKind::Format,
                         msg("om::onnx::read: malformed ONNX file: the graph's nodes form a cycle (each reads the next one's output): ",
                             text, ". A graph must be acyclic; ", n - order.size(), " node", n - order.size() == 1 ? "" : "s",
                             " cannot be ordered"));
  }
  std::vector<Node> nodes;
  nodes.reserve(n);
  for (size_t i : order) nodes.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(nodes);
  *file_index = std::move(order);
  return Status::ok();
}

}  // namespace om::onnx::detail
