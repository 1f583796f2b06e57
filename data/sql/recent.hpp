#pragma once

// A bounded map from a statement's exact text to what was decided or built
// for it, forgetting the least recently used entry when full. Used where a
// result is a pure function of the text for the life of its owner: the
// SQL guard's allowed verdicts, the executor's prepared statements. Not
// thread-safe: one per owner.

#include <cstddef>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace candor::data {

template <class Value>
class recent_statements {
public:
  /// Keeps at most `capacity` entries (0: keeps nothing), each with a text
  /// of at most `max_text` bytes (longer texts are not kept).
  explicit recent_statements(size_t capacity, size_t max_text = 8192)
    : capacity_(capacity), max_text_(max_text) {
  }

  recent_statements(recent_statements&&) noexcept = default;
  recent_statements& operator=(recent_statements&&) noexcept = default;

  /// The value kept for `text`, now the most recent; null when none.
  Value* find(std::string_view text) {
    auto found = index_.find(text);
    if (found == index_.end())
      return nullptr;
    order_.splice(order_.begin(), order_, found->second);
    return &found->second->second;
  }

  /// Keeps `value` for `text` (replacing one kept before), forgetting the
  /// least recent entry when full. Returns the kept value, or null when
  /// `text` is not kept (too long, or no capacity; `value` is then left
  /// as it was).
  Value* put(std::string_view text, Value&& value) {
    if (capacity_ == 0 || text.size() > max_text_)
      return nullptr;
    if (auto* v = find(text)) {
      *v = std::move(value);
      return v;
    }
    if (order_.size() >= capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(std::string{text}, std::move(value));
    index_.emplace(order_.front().first, order_.begin());
    return &order_.front().second;
  }

  /// Forgets `text`.
  void erase(std::string_view text) {
    auto found = index_.find(text);
    if (found == index_.end())
      return;
    auto it = found->second;
    index_.erase(found);
    order_.erase(it);
  }

  size_t size() const noexcept {
    return order_.size();
  }

private:
  using entry = std::pair<std::string, Value>;
  size_t capacity_;
  size_t max_text_;
  /// Most recent first. List nodes do not move, so the index's keys (views
  /// of the entries' texts) stay valid.
  std::list<entry> order_;
  std::unordered_map<std::string_view, typename std::list<entry>::iterator>
    index_;
};

} // namespace candor::data
