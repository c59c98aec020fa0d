// RUN: ggc-opt %s -split-input-file -ggk-allocate-shared-memory -verify-diagnostics

llvm.func @undeclared(%smem: !llvm.ptr<3>) -> !llvm.ptr<3> {
  ggk.shared_buffer "a_tiles" attributes {bytes = 100, align = 1}
  // expected-error @+1 {{addresses buffer 'b_tiles', which the function does not declare}}
  %p = ggk.shared_address %smem "b_tiles" attributes {stride = 0, offset = 0}
  llvm.return %p : !llvm.ptr<3>
}

// -----

llvm.func @declared_twice(%smem: !llvm.ptr<3>) {
  ggk.shared_buffer "a_tiles" attributes {bytes = 100, align = 1}
  // expected-error @+1 {{declares buffer 'a_tiles' a second time}}
  ggk.shared_buffer "a_tiles" attributes {bytes = 100, align = 1}
  llvm.return
}

// -----

llvm.func @past_the_end(%smem: !llvm.ptr<3>) -> !llvm.ptr<3> {
  ggk.shared_buffer "a_tiles" attributes {bytes = 100, align = 1}
  // expected-error @+1 {{offset 128 lies past buffer 'a_tiles' of 100 bytes}}
  %p = ggk.shared_address %smem "a_tiles" attributes {stride = 0, offset = 128}
  llvm.return %p : !llvm.ptr<3>
}
