// The tracer's fixed arena: every record of a trace (values, nodes, attributes, symbolic
// extents, names) is bump-allocated from one buffer of TracerOptions::arena_bytes, reserved at
// begin(). Nothing is freed until the trace ends, and running out is an error, not a realloc.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

namespace om::trace {

class Arena {
 public:
  explicit Arena(size_t capacity) : buffer_(new (std::nothrow) uint8_t[capacity]), capacity_(buffer_ ? capacity : 0) {}
  size_t capacity() const { return capacity_; }
  size_t used() const { return used_; }
  bool exhausted() const { return exhausted_; }

  // Null (and exhausted() turns true) when the arena is full.
  void* allocate(size_t bytes, size_t align = alignof(std::max_align_t)) {
    const size_t start = (used_ + align - 1) / align * align;
    if (start + bytes > capacity_) {
      exhausted_ = true;
      return nullptr;
    }
    used_ = start + bytes;
    return buffer_.get() + start;
  }
  template <typename T>
  T* array(size_t n) {
    static_assert(std::is_trivially_destructible<T>::value, "arena objects are never destroyed");
    if (n == 0) return nullptr;
    void* p = allocate(sizeof(T) * n, alignof(T));
    return p ? new (p) T[n]() : nullptr;
  }
  const char* string(const std::string& s) {
    char* p = static_cast<char*>(allocate(s.size() + 1, 1));
    if (!p) return "";
    std::memcpy(p, s.c_str(), s.size() + 1);
    return p;
  }

 private:
  std::unique_ptr<uint8_t[]> buffer_;
  size_t capacity_;
  size_t used_ = 0;
  bool exhausted_ = false;
};

template <typename T>
struct Span {
  T* data = nullptr;
  uint32_t size = 0;
  T& operator[](size_t i) const { return data[i]; }
  T* begin() const { return data; }
  T* end() const { return data + size; }
};

template <typename T, typename C>
Span<T> copy_span(Arena& arena, const C& items) {
  Span<T> s;
  s.data = arena.array<T>(items.size());
  if (!s.data) return s;
  s.size = uint32_t(items.size());
  size_t i = 0;
  for (const auto& x : items) s.data[i++] = x;
  return s;
}

// An append-only list in chunks of the arena (elements never move).
template <typename T, size_t kChunk = 256>
class ArenaList {
 public:
  explicit ArenaList(Arena& arena) : arena_(arena) {}
  T* push(const T& v) {
    if (size_ % kChunk == 0) {
      Chunk* c = arena_.array<Chunk>(1);
      if (!c) return nullptr;
      if (last_) last_->next = c;
      else first_ = c;
      last_ = c;
    }
    T* slot = &last_->items[size_ % kChunk];
    *slot = v;
    ++size_;
    return slot;
  }
  size_t size() const { return size_; }
  T& operator[](size_t i) {
    Chunk* c = first_;
    for (size_t k = i / kChunk; k > 0; --k) c = c->next;
    return c->items[i % kChunk];
  }
  template <typename Fn>
  void for_each(Fn fn) {
    size_t i = 0;
    for (Chunk* c = first_; c; c = c->next)
      for (size_t k = 0; k < kChunk && i < size_; ++k, ++i) fn(i, c->items[k]);
  }

 private:
  struct Chunk {
    T items[kChunk];
    Chunk* next;
  };
  Arena& arena_;
  Chunk* first_ = nullptr;
  Chunk* last_ = nullptr;
  size_t size_ = 0;
};

}  // namespace om::trace
