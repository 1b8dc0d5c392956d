// EntryIndex against a std::map model: names kept by the caller, found by
// entry number, through growth and clear().
#include "lathe/core/entry_index.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace lathe {
namespace {

TEST(EntryIndex, FindsEveryEntryByNameThroughGrowth) {
  std::vector<std::string> names;
  EntryIndex index;
  auto name_of = [&](uint32_t e) { return std::string_view(names[e]); };
  std::map<std::string, uint32_t> model;
  for (uint32_t i = 0; i < 5000; ++i) {
    names.push_back("layers." + std::to_string(i * 7919 % 5000) + ".weight");
    index.insert(i, EntryIndex::hash(names.back()));
    model[names.back()] = i;
  }
  EXPECT_EQ(index.size(), 5000u);
  for (const auto& [name, e] : model) ASSERT_EQ(index.find(name, name_of), e) << name;
}

TEST(EntryIndex, UnknownNamesAndAClearedIndexFindNothing_NEG) {
  std::vector<std::string> names = {"a", "b", "c"};
  auto name_of = [&](uint32_t e) { return std::string_view(names[e]); };
  EntryIndex index;
  EXPECT_EQ(index.find("a", name_of), EntryIndex::kNone);  // empty
  for (uint32_t i = 0; i < names.size(); ++i) index.insert(i, EntryIndex::hash(names[i]));
  EXPECT_EQ(index.find("d", name_of), EntryIndex::kNone);
  EXPECT_EQ(index.find("", name_of), EntryIndex::kNone);
  // A name whose hash matches a slot but whose text differs is not found:
  // the same hash passed for another name.
  EXPECT_EQ(index.find("z", EntryIndex::hash("a"), name_of), EntryIndex::kNone);
  index.clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.find("a", name_of), EntryIndex::kNone);
}

}  // namespace
}  // namespace lathe
