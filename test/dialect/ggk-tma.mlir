// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The TMA and mbarrier ops print as they parse.
// CHECK-LABEL: llvm.func @round_trip
// CHECK: ggk.mbarrier_init %{{.*}} attributes {count = 2 : i64}
// CHECK-NEXT: ggk.mbarrier_arrive_expect_tx %{{.*}}, %{{.*}}
// CHECK-NEXT: ggk.tma_load %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} l2_hint(%{{.*}})
// CHECK-NEXT: ggk.mbarrier_arrive %{{.*}}
// CHECK-NEXT: ggk.tma_store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}]
// CHECK-NEXT: ggk.bulk_commit_group
// CHECK-NEXT: ggk.bulk_wait_group read attributes {pending = 1 : i64}
llvm.func @round_trip(%bar: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %map: !llvm.ptr, %x: i32,
                      %hint: i64) {
  ggk.mbarrier_init %bar attributes {count = 2}
  ggk.mbarrier_arrive_expect_tx %bar, %x
  ggk.tma_load %dst, %map[%x, %x, %x], %bar l2_hint(%hint)
  ggk.mbarrier_arrive %bar
  ggk.tma_store %dst, %map[%x, %x]
  ggk.bulk_commit_group
  ggk.bulk_wait_group read attributes {pending = 1}
  llvm.return
}

// -----

llvm.func @six_coordinates(%bar: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %map: !llvm.ptr, %x: i32) {
  // expected-error @+1 {{takes one coordinate per dimension of its tensor map, 1 to 5, got 6}}
  ggk.tma_load %dst, %map[%x, %x, %x, %x, %x, %x], %bar
  llvm.return
}

// -----

llvm.func @no_coordinates(%src: !llvm.ptr<3>, %map: !llvm.ptr) {
  // expected-error @+1 {{takes one coordinate per dimension of its tensor map, 1 to 5, got 0}}
  ggk.tma_store %src, %map[]
  llvm.return
}

// -----

llvm.func @no_arrivals(%bar: !llvm.ptr<3>) {
  // expected-error @+1 {{attribute 'count' failed to satisfy constraint}}
  ggk.mbarrier_init %bar attributes {count = 0}
  llvm.return
}

// -----

llvm.func @multicast_alone(%bar: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %map: !llvm.ptr, %x: i32) {
  // expected-error @+1 {{attribute 'cluster' failed to satisfy constraint}}
  ggk.tma_load_multicast %dst, %map[%x], %bar rank(%x) attributes {cluster = 1}
  llvm.return
}
