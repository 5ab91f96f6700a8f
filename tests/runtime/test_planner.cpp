// The greedy memory planner on hand-made lifetime tables: exact offsets, arena sizes and the
// live-bytes lower bound, worked out by hand in the comments.
#include <doctest/doctest.h>

#include "onemodel/runtime/memory_planner.h"

using om::runtime::BufferRequest;
using om::runtime::plan_memory;

TEST_CASE("planner: a chain of three buffers") {
  // A [0,1] 100 B -> 128; B [1,2] 200 B -> 256; C [2,3] 100 B -> 128.
  // Largest first: B at 0; A overlaps B -> 256; C overlaps B (not A) -> 256.
  auto p = plan_memory({{100, 0, 1}, {200, 1, 2}, {100, 2, 3}});
  CHECK(p.offsets == std::vector<size_t>{256, 0, 256});
  CHECK(p.arena_bytes == 384);
  CHECK(p.lower_bound_bytes == 384);  // steps 1 and 2 hold 128 + 256
}

TEST_CASE("planner: a dead buffer's bytes are reused through a gap") {
  // b0 128 [0,1]; b1 128 [1,2]; b2 64 [2,3]; b3 64 [0,0].
  // b0 -> 0; b1 overlaps b0 -> 128; b2 overlaps only b1 (at 128): fits at 0 below it;
  // b3 overlaps only b0 (at 0) -> 128.
  auto p = plan_memory({{128, 0, 1}, {128, 1, 2}, {64, 2, 3}, {64, 0, 0}});
  CHECK(p.offsets == std::vector<size_t>{0, 128, 0, 128});
  CHECK(p.arena_bytes == 256);
  CHECK(p.lower_bound_bytes == 256);
}

TEST_CASE("planner: greedy order can exceed the lower bound") {
  // b0 256 [0,1]; b1 256 [3,4]; b2 64 [1,3]; b3 128 [2,2].
  // b0 -> 0, b1 -> 0, b3 -> 0 (no overlaps among them); b2 overlaps all three -> 256.
  auto p = plan_memory({{256, 0, 1}, {256, 3, 4}, {64, 1, 3}, {128, 2, 2}});
  CHECK(p.offsets == std::vector<size_t>{0, 0, 256, 0});
  CHECK(p.arena_bytes == 320);
  CHECK(p.lower_bound_bytes == 320);  // step 1: 256 + 64
}

TEST_CASE("planner: same-step buffers never share bytes, ties keep request order") {
  // Four 64-byte buffers all alive at step 0: stacked in request order.
  auto p = plan_memory({{64, 0, 0}, {1, 0, 0}, {64, 0, 0}, {33, 0, 0}});
  CHECK(p.offsets == std::vector<size_t>{0, 64, 128, 192});
  CHECK(p.arena_bytes == 256);
  CHECK(p.lower_bound_bytes == 256);
}

TEST_CASE("planner: zero-sized buffers take no space; alignment is configurable") {
  auto p = plan_memory({{0, 0, 5}, {10, 0, 1}, {10, 1, 2}}, 16);
  CHECK(p.offsets == std::vector<size_t>{0, 0, 16});
  CHECK(p.arena_bytes == 32);
  CHECK(p.lower_bound_bytes == 32);
  auto empty = plan_memory({});
  CHECK(empty.arena_bytes == 0);
  CHECK(empty.lower_bound_bytes == 0);
}
