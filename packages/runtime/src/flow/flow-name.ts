/** The name a flow class is stored under when no instance name is given: `static flowName`, else the class name. */
export function flowNameOf(flowClass: { readonly name: string; readonly flowName?: string }): string {
  return Object.hasOwn(flowClass, 'flowName') && typeof flowClass.flowName === 'string'
    ? flowClass.flowName
    : flowClass.name || 'Flow';
}
