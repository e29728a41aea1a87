#include <spindle/ecs/events.h>

namespace spindle::core {

void EventQueues::begin_frame() {
  for (EventQueueBase* q : list_) q->begin_frame();
  in_step_ = false;  // also after a step whose stage threw
}

void EventQueues::begin_step() {
  for (EventQueueBase* q : list_) q->deliver();
  in_step_ = true;
}

void EventQueues::end_step() {
  in_step_ = false;
}

}  // namespace spindle::core
