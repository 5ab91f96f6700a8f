// docs/architecture.md: each room of onemodel/ includes only the rooms its table allows.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace fs = std::filesystem;

TEST_CASE("every include of the library runs down a layer (docs/architecture.md)") {
  const std::map<std::string, std::set<std::string>> allowed = {
      {"kernels", {}},
      {"core", {"kernels"}},
      {"ops", {"core", "kernels"}},
      {"autograd", {"ops", "core", "kernels"}},
      {"data", {"ops", "core", "kernels"}},
      {"graph", {"core", "kernels"}},
      {"io", {"graph", "core", "kernels"}},
      {"trace", {"io", "graph", "ops", "core", "kernels"}},
      {"runtime", {"trace", "io", "graph", "core", "kernels"}},
      {"nn", {"runtime", "trace", "io", "graph", "data", "autograd", "ops", "core", "kernels"}},
      {"quant", {"runtime", "io", "graph", "core", "kernels"}},
  };
  const fs::path root = fs::path(OM_SOURCE_DIR) / "onemodel";
  const std::regex include(R"(#include\s+"onemodel/([a-z_]+)/)");
  size_t files = 0, arrows = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    const fs::path rel = fs::relative(entry.path(), root);
    if (rel.begin() == rel.end() || std::next(rel.begin()) == rel.end()) continue;  // onemodel.h
    const std::string room = rel.begin()->string();
    const std::string ext = entry.path().extension().string();
    if (ext != ".h" && ext != ".cpp" && ext != ".def") continue;
    ++files;
    REQUIRE_MESSAGE(allowed.count(room), "room '", room, "' is missing from docs/architecture.md and this test");
    std::ifstream f(entry.path());
    std::string line;
    while (std::getline(f, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string dep = m[1];
      if (dep == room) continue;
      ++arrows;
      CHECK_MESSAGE(allowed.at(room).count(dep), rel.string(), " includes onemodel/", dep, "/: ", room,
                    " may include only the rooms below it (docs/architecture.md)");
    }
  }
  CHECK(files > 100);
  CHECK(arrows > 50);
}
