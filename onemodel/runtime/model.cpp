#include "onemodel/runtime/model.h"

#include "onemodel/io/format_v1.h"

namespace om {

Status Model::try_load(const std::string& path, Model* out) {
  OM_ASSIGN_OR_RETURN(graph::Graph g, format_v1::read_file(path));
  *out = Model(std::move(g));
  return Status::ok();
}

Model Model::load(const std::string& path) {
  Model m;
  check(try_load(path, &m));
  return m;
}

void Model::save(const std::string& path) const { check(format_v1::write_file(graph_, path)); }

}  // namespace om
