// Memory budgets (spindle/base/budget.h) with spindle::heap_guard linked into this binary: arenas
// carved from one block, refusals and panics counted and logged once, operator new routed by
// BudgetScope, an arena that overflows taking from the heap instead of crashing, the heap counted
// after seal(), and an engine that books its job pool and world in the budget and then runs
// frames without touching the heap.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <spindle/base/budget.h>
#include <spindle/base/log.h>
#include <spindle/engine/engine.h>

namespace spindle::core {
namespace {

// Collects warnings while alive, so a test can count what the budget logged.
class LogCapture {
 public:
  LogCapture() {
    id_ = logger().add_sink(
        [](void* self, const LogRecord& r) {
          static_cast<LogCapture*>(self)->lines_.emplace_back(r.message, r.message_size);
        },
        this);
  }
  ~LogCapture() { logger().remove_sink(id_); }
  std::size_t count_containing(const std::string& text) const {
    std::size_t n = 0;
    for (const std::string& l : lines_) n += l.find(text) != std::string::npos ? 1 : 0;
    return n;
  }

 private:
  int id_ = 0;
  std::vector<std::string> lines_;
};

TEST(Budget, ArenasAreCarvedInOrderOnCacheLinesAndAddUp) {
  MemoryBudget budget(64 * 1024);
  BudgetArena& a = budget.add_arena("a", 1000, "drop a");
  BudgetArena& b = budget.add_arena("b", 4096, "drop b");
  EXPECT_EQ(a.capacity(), 1024u);  // rounded up to kArenaAlign
  EXPECT_EQ(b.capacity(), 4096u);
  EXPECT_EQ(budget.assigned(), 1024u + 4096u);
  EXPECT_EQ(budget.arena("b"), &b);
  EXPECT_EQ(budget.arena("c"), nullptr);
  EXPECT_STREQ(b.panic_mode(), "drop b");
  void* pa = a.allocate(10, 1);
  void* pb = b.allocate(10, 1);
  ASSERT_NE(pa, nullptr);
  ASSERT_NE(pb, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pa) % MemoryBudget::kArenaAlign, 0u);
  EXPECT_EQ(static_cast<std::byte*>(pb) - static_cast<std::byte*>(pa), 1024);
  EXPECT_TRUE(a.owns(pa));
  EXPECT_FALSE(a.owns(pb));
  EXPECT_TRUE(detail::in_budget_block(pb));
  EXPECT_EQ(budget.high_water(), 20u);
}

TEST(Budget, ACallersBlockOfAnyAlignmentWorks) {
  alignas(64) static std::byte block[8192 + 64];
  MemoryBudget budget(block + 3, 8192);  // arenas start on the next 64-byte boundary
  BudgetArena& a = budget.add_arena("a", 4096, "none");
  void* p = a.allocate(8, 8);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p, static_cast<void*>(block + 64));
  EXPECT_EQ(budget.assigned(), 61u + 4096u);
}

TEST(Budget, AFullArenaRefusesCountsAndLogsOnceWithItsPanicMode) {
  MemoryBudget budget(4096);
  LogCapture log;  // after the budget: nothing it allocates may outlive its arenas
  BudgetArena& a = budget.add_arena("voices", 256, "refuse new voices");
  EXPECT_NE(a.allocate(200, 8), nullptr);
  EXPECT_EQ(a.allocate(100, 8), nullptr);
  EXPECT_EQ(a.allocate(100, 8), nullptr);
  EXPECT_EQ(a.refusals(), 2u);
  EXPECT_NE(a.allocate(56, 8), nullptr);  // what is left still serves
  EXPECT_EQ(a.remaining(), 0u);
  EXPECT_EQ(log.count_containing("'voices' is full"), 1u);
  EXPECT_EQ(log.count_containing("refuse new voices"), 1u);
  // Alignment padding counts: 1 byte left after an odd allocation cannot hold an aligned one.
  BudgetArena& b = budget.add_arena("b", 64, "none");
  EXPECT_NE(b.allocate(63, 1), nullptr);
  EXPECT_EQ(b.allocate(1, 2), nullptr);
  EXPECT_NE(b.allocate(1, 1), nullptr);
}

TEST(Budget, PanicsAreCountedAndTheFirstIsLogged) {
  MemoryBudget budget(4096);
  LogCapture log;
  BudgetArena& a = budget.add_arena("swarm", 64, "drop the farthest enemies");
  a.panic("12 over capacity");
  a.panic();
  EXPECT_EQ(a.panics(), 2u);
  EXPECT_EQ(budget.panics(), 2u);
  EXPECT_EQ(log.count_containing("drop the farthest enemies - 12 over capacity"), 1u);
}

TEST(Budget, OperatorNewInAScopeTakesFromItsArenaAndScopesNest) {
  ASSERT_TRUE(heap_guard_linked());
  MemoryBudget budget(256 * 1024);
  BudgetArena& outer = budget.add_arena("outer", 64 * 1024, "none");
  BudgetArena& inner = budget.add_arena("inner", 64 * 1024, "none");
  std::vector<int> heap_before(10);
  EXPECT_FALSE(detail::in_budget_block(heap_before.data()));
  {
    BudgetScope a(outer);
    std::vector<int> v(1000);
    EXPECT_TRUE(outer.owns(v.data()));
    {
      BudgetScope b(inner);
      auto p = std::make_unique<std::uint64_t[]>(100);
      EXPECT_TRUE(inner.owns(p.get()));
      BudgetScope none(nullptr);
      std::vector<int> h(10);
      EXPECT_FALSE(detail::in_budget_block(h.data()));
    }
    std::vector<int> w(10);
    EXPECT_TRUE(outer.owns(w.data()));  // back in the outer scope
  }                                     // arena memory freed: a no-op
  EXPECT_GE(outer.high_water(), 4000u);
  EXPECT_GE(inner.high_water(), 800u);
  std::vector<int> after(10);
  EXPECT_FALSE(detail::in_budget_block(after.data()));
  EXPECT_EQ(current_budget_arena(), nullptr);
  // Over-aligned new in an arena keeps its alignment.
  struct alignas(256) Wide {
    char c;
  };
  BudgetScope a(outer);
  auto wide = std::make_unique<Wide>();
  EXPECT_TRUE(outer.owns(wide.get()));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(wide.get()) % 256, 0u);
}

TEST(Budget, AnArenaThatOverflowsHandsOverToTheHeapAndSaysBy) {
  MemoryBudget budget(64 * 1024);
  LogCapture log;  // it logs inside the scope, into the arena: it must go before the budget
  BudgetArena& small = budget.add_arena("small", 1024, "fewer things");
  bool fits_in_arena = false, big_in_budget = true;
  int last = 0;
  {
    BudgetScope scope(small);
    std::vector<std::uint8_t> fits(512);
    std::vector<std::uint8_t> big(4096, 7);  // does not fit: from the heap, and usable
    fits_in_arena = small.owns(fits.data());
    big_in_budget = detail::in_budget_block(big.data());
    last = big[4095];
  }
  EXPECT_TRUE(fits_in_arena);
  EXPECT_FALSE(big_in_budget);
  EXPECT_EQ(last, 7);
  EXPECT_EQ(small.overflow_bytes(), 4096u);
  EXPECT_EQ(budget.overflow_bytes(), 4096u);
  EXPECT_EQ(small.refusals(), 1u);
  EXPECT_EQ(log.count_containing("'small' is full"), 1u);
}

// Keeps what it is given alive to the optimiser, which may otherwise drop a new/delete or a
// malloc/free pair whose memory nobody reads.
void* volatile g_sink = nullptr;

// seal() is for the whole process: the tests that count after it come last (gtest runs a file's
// tests in order), and each counts from its own starting point.
TEST(BudgetSealed, HeapUseAfterSealIsCountedThroughNewAndTheCHeap) {
  MemoryBudget budget(64 * 1024);
  BudgetArena& a = budget.add_arena("a", 32 * 1024, "none");
  const HeapCount before_seal = heap_after_seal();
  auto unsealed = std::make_unique<int>(1);
  EXPECT_EQ(heap_after_seal().allocations, before_seal.allocations);  // not sealed yet
  budget.seal();
  EXPECT_TRUE(budget.sealed());
  const HeapCount before = heap_after_seal();
  auto p = std::make_unique<std::uint64_t>(5);
  g_sink = p.get();
  EXPECT_EQ(heap_after_seal().allocations, before.allocations + 1);
  EXPECT_GE(heap_after_seal().bytes, before.bytes + sizeof(std::uint64_t));
  void* m = std::malloc(100);  // this test's own object is wrapped
  g_sink = m;
  EXPECT_EQ(heap_after_seal().allocations, before.allocations + 2);
  std::free(m);
  void* c = std::calloc(3, 10);
  g_sink = c;
  void* r = std::realloc(c, 300);
  g_sink = r;
  EXPECT_EQ(heap_after_seal().allocations, before.allocations + 4);
  std::free(r);
  {
    BudgetScope scope(a);
    auto in_arena = std::make_unique<std::uint64_t>(6);
    g_sink = in_arena.get();
    EXPECT_TRUE(a.owns(in_arena.get()));
  }
  EXPECT_EQ(heap_after_seal().allocations, before.allocations + 4);  // arenas are not the heap
}

struct Pos {
  std::int32_t x = 0, y = 0;
};

TEST(BudgetSealed, AnEngineBooksItsJobsAndWorldInTheBudgetAndFramesUseNoHeap) {
  MemoryBudget budget(1024 * 1024);
  BudgetArena& jobs_arena = budget.add_arena("jobs", 128 * 1024, "jobs run inline");
  BudgetArena& ecs = budget.add_arena("ecs", 512 * 1024, "fewer entities");
  BudgetArena& engine_arena = budget.add_arena("engine", 128 * 1024, "none");
  std::unique_ptr<Engine> engine;
  {
    BudgetScope scope(engine_arena);
    engine = std::make_unique<Engine>(EngineConfig{.mode = jobs::Mode::Single,
                                                   .workers = 1,
                                                   .pin_workers = false,
                                                   .jobs_per_worker = 64,
                                                   .entity_capacity = 512,
                                                   .memory = &budget});
    World& w = engine->world();
    w.register_component<Pos>("pos");
    for (int i = 0; i < 500; ++i) w.add<Pos>(w.create(), Pos{i, -i});
    engine->add_system<Pos>("move", [](StageContext&, Entity, Pos& p) { p.x += 1; });
  }
  const std::size_t jobs_before = jobs_arena.high_water(), ecs_before = ecs.high_water();
  EXPECT_GT(jobs_before, 0u);  // the job pool
  EXPECT_GT(ecs_before, 0u);   // the world's entity table
  const std::size_t graph_before = engine_arena.high_water();
  engine->frame(engine->config().fixed_step_ns);  // builds the stage graph: in "engine"
  engine->frame(engine->config().fixed_step_ns);
  EXPECT_GT(engine_arena.high_water(), graph_before);
  budget.seal();
  const HeapCount before = heap_after_seal();
  for (int f = 0; f < 50; ++f) engine->frame(engine->config().fixed_step_ns);
  EXPECT_EQ(heap_after_seal().allocations, before.allocations);
  EXPECT_EQ(budget.overflow_bytes(), 0u);
  EXPECT_EQ(engine->world().storage<Pos>()->data()[0].x, 52);
  engine.reset();  // before the budget: its memory outlives the engine
}

// The "ecs" arena's panic mode: a world booked in a budget refuses a spawn past its capacity,
// and that is the arena's panic, counted in its panics() and logged once with its panic mode.
TEST(Budget, AFullWorldIsTheEcsArenasPanicMode) {
  MemoryBudget budget(1024 * 1024);
  LogCapture log;
  budget.add_arena("jobs", 128 * 1024, "jobs run inline");
  BudgetArena& ecs = budget.add_arena("ecs", 256 * 1024, "the spawn is refused");
  auto engine = std::make_unique<Engine>(EngineConfig{.mode = jobs::Mode::Single,
                                                      .workers = 1,
                                                      .pin_workers = false,
                                                      .jobs_per_worker = 64,
                                                      .entity_capacity = 8,
                                                      .memory = &budget});
  World& w = engine->world();
  w.register_component<Pos>("pos");
  for (int i = 0; i < 6; ++i) w.add<Pos>(w.create(), Pos{i, 0});
  engine->add_stage(
      {.name = "spawn", .access = Access{}.write<Pos>(), .run = [](StageContext& ctx) {
         for (int i = 0; i < 3; ++i) ctx.commands().spawn(Pos{100 + i, 0});
       }});
  engine->frame(engine->config().fixed_step_ns);  // 2 of 3 spawns fit
  EXPECT_EQ(w.entity_count(), 8u);
  EXPECT_EQ(w.command_stats().create_failed, 1u);
  EXPECT_EQ(ecs.panics(), 1u);
  EXPECT_TRUE(w.create().is_null());  // a direct create() past the capacity too
  EXPECT_EQ(ecs.panics(), 2u);
  engine->frame(engine->config().fixed_step_ns);
  EXPECT_EQ(w.command_stats().create_failed, 4u);
  EXPECT_EQ(ecs.panics(), 5u);
  EXPECT_EQ(budget.panics(), 5u);
  // One line, the arena's, naming its panic mode; not the world's own warning besides.
  EXPECT_EQ(log.count_containing("arena 'ecs'"), 1u);
  EXPECT_EQ(log.count_containing("the spawn is refused"), 1u);
  EXPECT_EQ(log.count_containing("world: spawn refused"), 0u);
  engine.reset();
}

}  // namespace
}  // namespace spindle::core
